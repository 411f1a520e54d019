package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import dev.sluice.servlet.CostAfter;
import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.spring.testapp.TestApp;
import dev.sluice.tck.Eventually;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * {@code cost-after} and {@code max-in-flight} from properties, in a real Spring Boot app over real HTTP: the estimate
 * is reserved, the actual settled from a response header, a request attribute, or a streamed response's attribute
 * when the stream ends; slots are held while requests run. Each test has its own API key.
 */
@SpringBootTest(
        classes = {TestApp.class, CostAfterAndInFlightStarterTest.LlmApi.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "sluice.rules[0].name=tokens",
            "sluice.rules[0].paths=/llm/**",
            "sluice.rules[0].key=header:X-Api-Key",
            "sluice.rules[0].requests_per_unit=1000",
            "sluice.rules[0].unit=minute",
            "sluice.rules[0].algorithm=token_bucket",
            "sluice.rules[0].cost-after.estimate=100",
            "sluice.rules[0].cost-after.header=X-Tokens-Used",
            "sluice.rules[1].name=concurrent",
            "sluice.rules[1].paths=/slow/**",
            "sluice.rules[1].key=header:X-Api-Key",
            "sluice.rules[1].max-in-flight=1",
            "sluice.rules[1].in-flight-lease=2m"
        })
@Import(CostAfterAndInFlightStarterTest.Clock.class)
class CostAfterAndInFlightStarterTest {
    static final CountDownLatch FINISH_SLOW = new CountDownLatch(1);
    static final CountDownLatch SLOW_STARTED = new CountDownLatch(1);

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Autowired
    RateLimitFilter filter;

    @TestConfiguration
    static class Clock {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2026-01-01T00:00:10Z"));
        }
    }

    @RestController
    static class LlmApi {
        @GetMapping("/llm/header")
        String header(@RequestParam long used, HttpServletResponse response) {
            response.setHeader("X-Tokens-Used", Long.toString(used));
            return "completion";
        }

        @GetMapping("/llm/attribute")
        String attribute(@RequestParam long used, HttpServletRequest request) {
            request.setAttribute(CostAfter.DEFAULT_ATTRIBUTE, used);
            return "completion";
        }

        @GetMapping("/llm/stream")
        StreamingResponseBody stream(@RequestParam long used, HttpServletRequest request) {
            return out -> {
                out.write("first ".getBytes(StandardCharsets.UTF_8));
                request.setAttribute(CostAfter.DEFAULT_ATTRIBUTE, used); // known only once the stream ends
                out.write("last".getBytes(StandardCharsets.UTF_8));
            };
        }

        @GetMapping("/slow/work")
        String slow() throws InterruptedException {
            SLOW_STARTED.countDown();
            return FINISH_SLOW.await(10, TimeUnit.SECONDS) ? "done" : "timed out";
        }
    }

    private long tokensLeft(String apiKey) {
        Limit tokens = Objects.requireNonNull(filter.rules().get(0).limit());
        return limiter.peek("tokens:" + apiKey, tokens, 1).remaining();
    }

    /** Waits (at most 10 s, a hang guard) for the settle that follows the response to reach the store. */
    private void awaitTokensLeft(String apiKey, long expected) {
        Eventually.await(
                Duration.ofSeconds(10),
                "the settle to leave " + expected + " tokens to " + apiKey,
                () -> tokensLeft(apiKey) == expected);
    }

    @Test
    void settlesOnTheActualFromTheResponseHeader() throws Exception {
        HttpResponse<String> r = Http.get(port, "/llm/header?used=250", "X-Api-Key", "header-key");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit")).hasValue("\"tokens\";r=900;t=6");
        awaitTokensLeft("header-key", 750);
    }

    @Test
    void settlesOnTheActualFromTheRequestAttribute() throws Exception {
        assertThat(Http.get(port, "/llm/attribute?used=30", "X-Api-Key", "attr-key")
                        .statusCode())
                .isEqualTo(200);
        awaitTokensLeft("attr-key", 970);
    }

    @Test
    void aStreamedResponseSettlesWhenItEnds() throws Exception {
        HttpResponse<String> r = Http.get(port, "/llm/stream?used=10", "X-Api-Key", "stream-key");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("first last");
        awaitTokensLeft("stream-key", 990);
    }

    @Test
    void maxInFlightAloneAnswers429WhileTheSlotIsHeldAndAdmitsOnceReleased() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        CompletableFuture<HttpResponse<String>> first = client.sendAsync(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/slow/work"))
                        .header("X-Api-Key", "slow-key")
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(SLOW_STARTED.await(10, TimeUnit.SECONDS)).isTrue();

        HttpResponse<String> denied = Http.get(port, "/slow/work", "X-Api-Key", "slow-key");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(denied.body()).contains("Max in flight of rule 'concurrent' reached: 1 requests");

        FINISH_SLOW.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS).body()).isEqualTo("done");
        // the release follows the response: a retry is admitted once it has reached the store
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        do {
            status = Http.get(port, "/slow/work", "X-Api-Key", "slow-key").statusCode();
        } while (status == 429 && System.nanoTime() < deadline);
        assertThat(status).isEqualTo(200);
    }
}
