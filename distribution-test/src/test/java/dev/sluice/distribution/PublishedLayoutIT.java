package dev.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.distribution.ReadmeSnippets.Snippet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * What the build deployed to the staging repository is what Maven Central needs: for every published module a pom,
 * a jar, a sources jar and a javadoc jar, a module name, and the metadata Central checks; a BOM that manages exactly
 * the published modules and nothing else; and every Sluice coordinate the READMEs show is among them.
 */
class PublishedLayoutIT {
    /** Published but not in the BOM: the parent (a pom every module's pom names) and the BOM itself. */
    private static final List<String> POMS_ONLY = List.of("sluice-parent", "sluice-bom");

    private static StagingRepository staging;

    @BeforeAll
    static void staging() {
        staging = StagingRepository.fromBuild();
    }

    @Test
    void theBomManagesExactlyThePublishedModules() throws Exception {
        List<String> published = new ArrayList<>(staging.artifactIds());
        published.removeAll(POMS_ONLY);
        assertThat(staging.artifactIds()).containsAll(POMS_ONLY);
        assertThat(staging.bomArtifactIds())
                .containsExactlyInAnyOrderElementsOf(published)
                .contains(
                        "sluice-core",
                        "sluice-tck",
                        "sluice-redis",
                        "sluice-postgres",
                        "sluice-client",
                        "sluice-server",
                        "sluice-servlet",
                        "sluice-spring-boot-starter",
                        "sluice-spring-cloud-gateway")
                .doesNotContain("sluice-bench", "sluice-distribution-test")
                .noneMatch(a -> a.startsWith("sluice-example"));
    }

    @Test
    void theBomCarriesSluiceVersionsAloneAndNoParent() throws Exception {
        Element bom = staging.pom("sluice-bom");
        assertThat(Xml.child(bom, "parent")).as("the deployed BOM's <parent>").isNull();
        assertThat(Xml.text(bom, "version")).isEqualTo(staging.version());
        for (Element d : Xml.all(bom, "dependency")) {
            assertThat(Xml.text(d, "groupId")).isEqualTo("dev.sluice");
            // an importing build reads ${project.version} in the BOM as the BOM's own version, asserted above
            assertThat(Xml.text(d, "version")).isIn(staging.version(), "${project.version}");
        }
        assertCentralMetadata("sluice-bom", bom);
    }

    @Test
    void everyPublishedModuleHasItsJarSourcesJavadocAndModuleName() throws Exception {
        Map<String, String> moduleNames = new HashMap<>();
        for (String artifactId : staging.bomArtifactIds()) {
            Path jar = staging.file(artifactId, "", "jar");
            Path sources = staging.file(artifactId, "sources", "jar");
            Path javadoc = staging.file(artifactId, "javadoc", "jar");
            assertThat(jar).as("%s's jar", artifactId).isNotNull();
            assertThat(sources).as("%s's sources jar", artifactId).isNotNull();
            assertThat(javadoc)
                    .as(
                            "%s's javadoc jar (made in verify; a build with -Dmaven.javadoc.skip has none, "
                                    + "so skip this module's tests too: -DskipITs)",
                            artifactId)
                    .isNotNull();
            try (JarFile j = new JarFile(jar.toFile());
                    JarFile s = new JarFile(sources.toFile());
                    JarFile d = new JarFile(javadoc.toFile())) {
                String name = j.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
                assertThat(name)
                        .as("%s's Automatic-Module-Name", artifactId)
                        .matches("dev\\.sluice(\\.[a-z][a-z0-9]*)+");
                assertThat(moduleNames.put(name, artifactId))
                        .as("%s: module name %s taken", artifactId, name)
                        .isNull();
                assertThat(s.stream().filter(e -> e.getName().endsWith(".java")))
                        .as("%s's sources", artifactId)
                        .isNotEmpty();
                assertThat(d.getEntry("index.html"))
                        .as("%s's javadoc index.html", artifactId)
                        .isNotNull();
            }
            assertThat(Xml.text(staging.pom(artifactId), "description"))
                    .as("%s's description", artifactId)
                    .isNotBlank();
        }
    }

    @Test
    void theParentCarriesWhatCentralRequires() throws Exception {
        assertCentralMetadata("sluice-parent", staging.pom("sluice-parent"));
    }

    /** README.md's and every published module's README: an unpublished module's names its in-repository use. */
    @Test
    void everySluiceCoordinateInTheReadmesIsPublished() throws Exception {
        List<String> checked = new ArrayList<>();
        for (Path readme : ReadmeSnippets.readmes(Build.root())) {
            Path pom = readme.resolveSibling("pom.xml");
            if (!readme.getParent().equals(Build.root())
                    && Files.isRegularFile(pom)
                    && !staging.artifactIds().contains(Xml.text(Xml.parse(pom), "artifactId"))) {
                continue;
            }
            for (Snippet block : ReadmeSnippets.xmlBlocks(readme)) {
                for (Element d : Xml.all(block.parse(), "dependency")) {
                    if (!"dev.sluice".equals(Xml.text(d, "groupId"))) {
                        continue;
                    }
                    String artifactId = Xml.text(d, "artifactId");
                    String version = Xml.text(d, "version");
                    assertThat(staging.artifactIds())
                            .as("%s: dev.sluice:%s is not published", block, artifactId)
                            .contains(artifactId);
                    if (version != null) {
                        assertThat(version)
                                .as("%s: the version of dev.sluice:%s", block, artifactId)
                                .isEqualTo(staging.version());
                    }
                    checked.add(artifactId);
                }
            }
        }
        // README.md shows at least sluice-core alone and the BOM
        assertThat(new TreeSet<>(checked)).contains("sluice-core", "sluice-bom");
    }

    private static void assertCentralMetadata(String artifactId, Element pom) {
        for (String[] path : new String[][] {
            {"name"},
            {"description"},
            {"url"},
            {"licenses", "license", "name"},
            {"licenses", "license", "url"},
            {"developers", "developer", "name"},
            {"scm", "url"},
            {"scm", "connection"}
        }) {
            assertThat(Xml.text(pom, path))
                    .as("%s's deployed pom: %s", artifactId, String.join("/", path))
                    .isNotBlank();
        }
    }
}
