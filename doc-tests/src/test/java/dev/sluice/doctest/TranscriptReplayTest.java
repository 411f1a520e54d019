package dev.sluice.doctest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Transcript} itself, against a tiny service of the JDK's: it sends what a doc's curl lines say, and a doc
 * showing another answer than the service gives fails, naming the doc's line.
 */
class TranscriptReplayTest {
    private HttpServer service;
    private URI base;
    private final AtomicInteger calls = new AtomicInteger();

    /** A counter: POST /count answers 200 with {"n":N,"at":"…"} three times, then 429 with Retry-After: 7. */
    @BeforeEach
    void start() throws IOException {
        service = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        service.createContext("/count", exchange -> {
            int n = calls.incrementAndGet();
            byte[] body = ("{\"n\":" + n + ",\"method\":\"" + exchange.getRequestMethod() + "\",\"sent\":"
                            + new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8) + "}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            if (n > 3) {
                exchange.getResponseHeaders().add("Retry-After", "7");
            }
            exchange.sendResponseHeaders(n > 3 ? 429 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        service.start();
        base = URI.create("http://127.0.0.1:" + service.getAddress().getPort() + "/");
    }

    @AfterEach
    void stop() {
        service.stop(0);
    }

    private static final String DOC = """
            Count three times, then once more:

            <!-- transcript: counter -->
            ```bash
            ./counter serve          # starts it: not replayed
            for i in 1 2; do curl -s -o /dev/null -w '%{http_code} ' -X POST 127.0.0.1:8080/count -d "{\\"i\\":$i}"; done
            # 200 200
            curl -s -X POST 127.0.0.1:8080/count \\
              -d '{"i":3}'
            # 200 {"n":3,…,"sent":{"i":3}}
            curl -i -X POST 127.0.0.1:8080/count -d '{}'
            ```

            ```
            HTTP/1.1 429
            Retry-After: 7

            {"n":4,
             "method":"POST",
             "sent":{}}
            ```
            """;

    @Test
    void aTranscriptThatShowsWhatTheServiceAnswersPasses(@TempDir Path dir) throws Exception {
        Path doc = Files.writeString(dir.resolve("README.md"), DOC);
        List<Transcript.Step> steps = Transcript.steps(doc, "counter");
        assertThat(Transcript.replay(steps, base)).isEqualTo(4);
        assertThat(calls).hasValue(4);
    }

    @Test
    void anAnswerOtherThanTheDocsFailsAtItsLine(@TempDir Path dir) throws Exception {
        Path doc = Files.writeString(
                dir.resolve("README.md"),
                DOC.replace("# 200 200", "# 200 429")
                        .replace("Retry-After: 7", "Retry-After: 8")
                        .replace("{\"n\":4,", "{\"n\":5,"));
        assertThatThrownBy(() -> Transcript.replay(Transcript.steps(doc, "counter"), base))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("README.md:6: output 200 200\n    the doc shows 200 429")
                .hasMessageContaining("README.md:11: header Retry-After: 7, the doc shows 8")
                .hasMessageContaining("README.md:11: body {\"n\":4,\"method\":\"POST\",\"sent\":{}}");
    }

    @Test
    void aCommandTheReplayCannotRunAsCurlDoesIsRefused(@TempDir Path dir) throws IOException {
        Path doc = Files.writeString(dir.resolve("README.md"), """
                <!-- transcript: counter -->
                ```bash
                curl -s --compressed 127.0.0.1:8080/count
                ```
                """);
        assertThatThrownBy(() -> Transcript.replay(Transcript.steps(doc, "counter"), base))
                .hasMessageContaining("curl option --compressed is not replayed");
    }
}
