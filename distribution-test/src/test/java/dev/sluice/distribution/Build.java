package dev.sluice.distribution;

import java.nio.file.Path;

/** What the Sluice build tells these tests (failsafe's systemPropertyVariables in distribution-test/pom.xml). */
final class Build {
    private Build() {}

    static String property(String name) {
        String value = System.getProperty(name);
        if (value == null || value.isBlank() || value.startsWith("${")) {
            throw new IllegalStateException("system property " + name + " is not set: run these tests through Maven "
                    + "(./mvnw -B verify -pl distribution-test -am), which sets it in distribution-test/pom.xml");
        }
        return value;
    }

    /** The repository's root directory: README.md is there. */
    static Path root() {
        return Path.of(property("sluice.root"));
    }
}
