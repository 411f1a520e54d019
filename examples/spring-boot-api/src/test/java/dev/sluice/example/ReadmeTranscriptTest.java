package dev.sluice.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import dev.sluice.doctest.Docs;
import dev.sluice.doctest.Transcript;
import java.net.URI;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.annotation.DirtiesContext;

/**
 * The docs' sessions with this example (the blocks marked {@code <!-- transcript: examples/spring-boot-api -->} in the
 * main README and in this module's), each replayed in order against the app as shipped, freshly started, on a frozen
 * clock: a reader following the README from the greetings to the exports and the Actuator endpoint gets the answers
 * it shows.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(ReadmeTranscriptTest.FrozenClock.class)
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD) // a fresh app for each document
class ReadmeTranscriptTest {
    @TestConfiguration
    static class FrozenClock {
        @Bean
        ManualTicker readmeTicker() {
            return ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
        }
    }

    @LocalServerPort
    int port;

    @ParameterizedTest
    @ValueSource(strings = {"README.md", "examples/spring-boot-api/README.md"})
    void theDocsCurlLinesGetTheAnswersTheyShow(String doc) throws Exception {
        List<Transcript.Step> steps = Transcript.steps(Docs.root().resolve(doc), "examples/spring-boot-api");
        int sent = Transcript.replay(steps, URI.create("http://127.0.0.1:" + port + "/"));
        assertThat(sent).as("curl commands sent").isGreaterThanOrEqualTo(steps.size());
    }
}
