package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The README's "With sluice-redis" section tells a Spring Boot application which Lettuce, Netty and Reactor to pin
 * (Boot 3.5's own Lettuce 6.6 re-sends a decision whose reply was lost). These tests run on exactly those: the
 * versions both of its snippets name are the ones on this class path, and Reactor's are those of the reactor-bom it
 * names (the build passes the README and that BOM's pom as system properties).
 */
class PinnedVersionsTest {
    private static final String README = System.getProperty("sluice.starter.readme", "README.md");
    private static final String REACTOR_BOM_POM = System.getProperty("sluice.reactor-bom.pom", "");

    @Test
    void theReadmePinsTheLettuceAndNettyTheTestsRunOn() throws IOException {
        String readme = Files.readString(Path.of(README));
        String lettuce = io.lettuce.core.RedisClient.class.getPackage().getImplementationVersion();
        assertThat(lettuce).as("Lettuce's version on the class path").isNotNull();
        String lettuceVersion = lettuce.split("/", 2)[0]; // "7.7.0.RELEASE/1960d49": the version, then the commit
        String netty = io.netty.util.Version.identify().get("netty-common").artifactVersion();

        assertThat(pinned(readme, "lettuce.version", "lettuce-core"))
                .as("%s: the Lettuce of both snippets", README)
                .containsExactly(lettuceVersion, lettuceVersion);
        assertThat(pinned(readme, "netty.version", "netty-bom"))
                .as("%s: the Netty of both snippets", README)
                .containsExactly(netty, netty);
    }

    @Test
    void theReadmePinsTheReactorTheTestsRunOn() throws Exception {
        String readme = Files.readString(Path.of(README));
        Path bom = Path.of(REACTOR_BOM_POM);
        assertThat(bom)
                .as("the reactor-bom pom the build names (sluice.reactor-bom.pom)")
                .isRegularFile();
        Element project = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(bom.toFile())
                .getDocumentElement();
        String bomVersion = text(project, "version");
        assertThat(pinned(readme, "reactor-bom.version", "reactor-bom"))
                .as("%s: the reactor-bom of both snippets", README)
                .containsExactly(bomVersion, bomVersion);

        assertThat(reactor.core.publisher.Flux.class.getPackage().getImplementationVersion())
                .as("reactor-core on the class path")
                .isEqualTo(managed(project, "reactor-core"));
        assertThat(reactor.netty.http.server.HttpServer.class.getPackage().getImplementationVersion())
                .as("reactor-netty on the class path")
                .isEqualTo(managed(project, "reactor-netty-http"));
    }

    /**
     * The version the README's properties snippet gives {@code property} and the one its dependencyManagement snippet
     * gives {@code artifactId}, in that order (either is missing when the README names none).
     */
    private static List<String> pinned(String readme, String property, String artifactId) {
        List<String> versions = new ArrayList<>();
        Matcher p =
                Pattern.compile("<" + Pattern.quote(property) + ">([^<]+)</").matcher(readme);
        if (p.find()) {
            versions.add(p.group(1));
        }
        Matcher d = Pattern.compile("<artifactId>" + Pattern.quote(artifactId) + "</artifactId>\\s*<version>([^<]+)</")
                .matcher(readme);
        if (d.find()) {
            versions.add(d.group(1));
        }
        return versions;
    }

    /** The version {@code bom} manages for io.projectreactor*:{@code artifactId}, or null. */
    private static String managed(Element bom, String artifactId) {
        NodeList deps = bom.getElementsByTagName("dependency");
        for (int i = 0; i < deps.getLength(); i++) {
            Element d = (Element) deps.item(i);
            if (artifactId.equals(text(d, "artifactId"))) {
                return text(d, "version");
            }
        }
        return null;
    }

    /** The text of {@code parent}'s first direct child named {@code name}, or null. */
    private static String text(Element parent, String name) {
        for (var n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e.getTextContent().trim();
            }
        }
        return null;
    }
}
