package dev.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.distribution.ReadmeSnippets.Snippet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * README.md's "Add the dependency" snippets, as a new user pastes them: a project with the plain dependency and one
 * with the BOM import and a dependency without a version, both taken from README.md as written, resolved from the
 * staging repository alone (with an empty local repository), compiled, packaged and run with {@code java -jar}.
 * Each main makes three decisions with InMemoryRateLimiter and prints them.
 */
class ConsumerProjectIT {
    /** What src/test/consumer's Main prints: a bucket of two, refilled one an hour, asked three times. */
    private static final String EXPECTED = """
            call 1: allowed, remaining 1
            call 2: allowed, remaining 0
            call 3: denied, remaining 0
            exit 0
            """;

    private static StagingRepository staging;
    private static ConsumerProject project;
    private static int buildExit;

    @BeforeAll
    static void buildTheReadmeSnippetsIntoANewProject() throws Exception {
        staging = StagingRepository.fromBuild();
        Path readme = Build.root().resolve("README.md");
        List<Snippet> blocks = ReadmeSnippets.xmlBlocks(readme);
        Snippet dependency = blocks.stream()
                .filter(ConsumerProjectIT::isPlainCoreDependency)
                .findFirst()
                .orElseThrow(() -> new AssertionError(readme + " has no ```xml block that is one <dependency> on "
                        + "dev.sluice:sluice-core with its version (the \"Add the dependency\" snippet)"));
        Snippet bom = blocks.stream()
                .filter(ConsumerProjectIT::importsTheBom)
                .findFirst()
                .orElseThrow(() -> new AssertionError(readme + " has no ```xml block importing dev.sluice:sluice-bom "
                        + "(<type>pom</type>, <scope>import</scope>) in <dependencyManagement>"));
        assertThat(versionlessSluiceDependencies(bom.parse()))
                .as("%s: the BOM snippet's dependencies on dev.sluice, without a version", bom)
                .isNotEmpty();

        project = ConsumerProject.prepare(
                Path.of("src/test/consumer"),
                Path.of("target/consumer"),
                Map.of(
                        "@@README_DEPENDENCY@@", dependency.text(),
                        "@@README_BOM@@", bom.text(),
                        "@@RESOURCES@@", Build.property("sluice.plugin.resources"),
                        "@@COMPILER@@", Build.property("sluice.plugin.compiler"),
                        "@@SUREFIRE@@", Build.property("sluice.plugin.surefire"),
                        "@@JAR@@", Build.property("sluice.plugin.jar")));
        buildExit = project.build(staging);
    }

    @Test
    void theDependencyWithItsVersionResolvesCompilesAndRuns() throws Exception {
        assertBuilt("plain");
        assertThat(project.run("plain")).isEqualTo(EXPECTED);
    }

    @Test
    void theBomImportAndAVersionlessDependencyResolveCompileAndRun() throws Exception {
        assertBuilt("bom");
        assertThat(project.run("bom")).isEqualTo(EXPECTED);
    }

    @Test
    void everySluiceArtifactCameFromTheStagingRepository() throws Exception {
        assertThat(buildExit).as(buildFailure()).isZero();
        Path resolved = project.localRepository.resolve(StagingRepository.GROUP_PATH);
        List<String> origins = new ArrayList<>();
        try (Stream<Path> files = Files.walk(resolved)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.endsWith("_remote.repositories"))::iterator) {
                Files.readAllLines(f).stream()
                        .filter(l -> !l.startsWith("#") && !l.isBlank())
                        .forEach(origins::add);
            }
        }
        // each line is "file>repository=": every Sluice file the consumer resolved came from the staging repository
        assertThat(origins)
                .isNotEmpty()
                .allMatch(
                        l -> l.endsWith(">" + ConsumerProject.STAGING_ID + "="),
                        "ends with >" + ConsumerProject.STAGING_ID + "=");
        try (Stream<Path> dirs = Files.list(resolved)) {
            assertThat(dirs.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("sluice-parent", "sluice-bom", "sluice-core");
        }
        // the very bytes deployed, and the jar each consumer runs on is the one in its own local repository
        Path jar = resolved.resolve("sluice-core")
                .resolve(staging.version())
                .resolve("sluice-core-" + staging.version() + ".jar");
        assertThat(Files.mismatch(jar, staging.file("sluice-core", "", "jar"))).isEqualTo(-1L);
        for (String module : List.of("plain", "bom")) {
            try (JarFile consumer = new JarFile(project.jar(module).toFile())) {
                assertThat(consumer.getManifest().getMainAttributes().getValue("Class-Path"))
                        .isEqualTo(jar.toAbsolutePath().toString());
            }
        }
    }

    private static void assertBuilt(String module) throws IOException {
        assertThat(project.jar(module)).as(buildFailure()).isRegularFile();
    }

    private static String buildFailure() {
        try {
            return "the consumer build (exit " + buildExit + ") of " + project.dir + ":\n"
                    + Files.readString(project.buildLog());
        } catch (IOException e) {
            return "the consumer build failed; its log is unreadable: " + e;
        }
    }

    private static boolean isPlainCoreDependency(Snippet s) {
        Element root = s.parse();
        List<Element> deps = Xml.children(root, "dependency");
        return deps.size() == 1
                && Xml.children(root, "dependencyManagement").isEmpty()
                && "dev.sluice".equals(Xml.text(deps.get(0), "groupId"))
                && "sluice-core".equals(Xml.text(deps.get(0), "artifactId"))
                && Xml.text(deps.get(0), "version") != null;
    }

    private static boolean importsTheBom(Snippet s) {
        Element managed = Xml.child(s.parse(), "dependencyManagement", "dependencies");
        return managed != null
                && Xml.children(managed, "dependency").stream()
                        .anyMatch(d -> "dev.sluice".equals(Xml.text(d, "groupId"))
                                && "sluice-bom".equals(Xml.text(d, "artifactId"))
                                && "pom".equals(Xml.text(d, "type"))
                                && "import".equals(Xml.text(d, "scope")));
    }

    private static List<String> versionlessSluiceDependencies(Element snippet) {
        Element deps = Xml.child(snippet, "dependencies");
        return deps == null
                ? List.of()
                : Xml.children(deps, "dependency").stream()
                        .filter(d -> "dev.sluice".equals(Xml.text(d, "groupId")) && Xml.text(d, "version") == null)
                        .map(d -> Xml.text(d, "artifactId"))
                        .toList();
    }
}
