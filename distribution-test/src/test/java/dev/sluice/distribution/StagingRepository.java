package dev.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.w3c.dom.Element;

/**
 * The file repository every published module deploys itself to in {@code verify} (the parent pom's staging
 * execution of maven-deploy-plugin): what Maven Central would receive, less the signatures. Snapshots are deployed
 * as remote repositories hold them, with a timestamp per deploy; {@link #file} finds the newest through the
 * version's maven-metadata.xml, as a resolver does.
 */
record StagingRepository(Path root, String version) {

    static final String GROUP_PATH = "dev/sluice";

    static StagingRepository fromBuild() {
        Path root = Path.of(Build.property("sluice.staging"));
        assertThat(root.resolve(GROUP_PATH))
                .as(
                        "the staging repository %s holds no dev.sluice artifact: the published modules deploy there in "
                                + "verify, so build them first (./mvnw -B verify, or -pl distribution-test -am)",
                        root)
                .isDirectory();
        return new StagingRepository(root, Build.property("sluice.version"));
    }

    /** The artifactIds deployed under dev.sluice. */
    Set<String> artifactIds() throws IOException {
        try (Stream<Path> dirs = Files.list(root.resolve(GROUP_PATH))) {
            return dirs.filter(Files::isDirectory)
                    .map(p -> p.getFileName().toString())
                    .collect(TreeSet::new, Set::add, Set::addAll);
        }
    }

    /** The deployed file of {@code artifactId} with this classifier ("" for none) and extension, or null. */
    Path file(String artifactId, String classifier, String extension) throws IOException {
        Path dir = root.resolve(GROUP_PATH).resolve(artifactId).resolve(version);
        String suffix = (classifier.isEmpty() ? "" : "-" + classifier) + "." + extension;
        if (!version.endsWith("-SNAPSHOT")) {
            Path file = dir.resolve(artifactId + "-" + version + suffix);
            return Files.isRegularFile(file) ? file : null;
        }
        Path metadata = dir.resolve("maven-metadata.xml");
        if (!Files.isRegularFile(metadata)) {
            return null;
        }
        for (Element v : Xml.all(Xml.parse(metadata), "snapshotVersion")) {
            String c = Xml.text(v, "classifier");
            if (classifier.equals(c == null ? "" : c) && extension.equals(Xml.text(v, "extension"))) {
                Path file = dir.resolve(artifactId + "-" + Xml.text(v, "value") + suffix);
                return Files.isRegularFile(file) ? file : null;
            }
        }
        return null;
    }

    /** The deployed pom of {@code artifactId}, parsed; fails when there is none. */
    Element pom(String artifactId) throws IOException {
        Path pom = file(artifactId, "", "pom");
        assertThat(pom).as("the deployed pom of %s in %s", artifactId, root).isNotNull();
        return Xml.parse(pom);
    }

    /** The artifactIds the deployed BOM manages, in its order. */
    List<String> bomArtifactIds() throws IOException {
        Element bom = pom("sluice-bom");
        return Xml.all(bom, "dependency").stream()
                .map(d -> Xml.text(d, "artifactId"))
                .toList();
    }
}
