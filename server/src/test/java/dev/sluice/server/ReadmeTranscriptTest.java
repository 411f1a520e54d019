package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.doctest.Docs;
import dev.sluice.doctest.Transcript;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The docs' sessions with {@code sluice serve} (the blocks marked {@code <!-- transcript: sluice serve -->}), replayed
 * in order against a real server with the built-in example rules on a frozen clock, one server per document as a
 * reader following it would have: every curl line is sent, and every answer the doc shows is the one given.
 */
class ReadmeTranscriptTest {

    @ParameterizedTest
    @ValueSource(strings = {"README.md", "server/README.md"})
    void theDocsCurlLinesGetTheAnswersTheyShow(String doc) throws Exception {
        List<Transcript.Step> steps = Transcript.steps(Docs.root().resolve(Path.of(doc)), "sluice serve");
        try (TestServer server = TestServer.start("sluice-example.yaml")) {
            int sent = Transcript.replay(steps, URI.create(server.base + "/"));
            assertThat(sent).as("curl commands sent from %s", doc).isGreaterThanOrEqualTo(steps.size());
        }
    }
}
