package dev.sluice.example.llm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.tck.Eventually;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;

/**
 * The example as shipped, over real HTTP: 1,000 tokens a minute per API key, each response settling the tokens it
 * used (from its header, or when a streamed one ends), a key in debt waiting it out, and at most two requests of a
 * key in flight. The limiter's clock is frozen (a {@link ManualTicker} bean the starter picks up); the model is the
 * shipped {@link EchoModel}, except that a prompt of "hold" waits for the test, to keep requests in flight.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(LlmGatewayApplicationTest.Fixtures.class)
class LlmGatewayApplicationTest {
    static final Semaphore HELD = new Semaphore(0);
    static final CountDownLatch LET_GO = new CountDownLatch(1);

    @TestConfiguration
    static class Fixtures {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
        }

        @Bean
        @Primary
        CompletionModel holdingModel() {
            EchoModel echo = new EchoModel();
            return (prompt, maxTokens) -> {
                if (prompt.equals("hold")) {
                    HELD.release();
                    try {
                        LET_GO.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return echo.complete(prompt, maxTokens);
            };
        }
    }

    private final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Autowired
    RateLimitFilter filter;

    @Autowired
    ManualTicker ticker;

    private HttpRequest completion(String apiKey, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/completions"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (apiKey != null) {
            b.header("X-Api-Key", apiKey);
        }
        return b.build();
    }

    private HttpResponse<String> complete(String apiKey, String body) throws Exception {
        return http.send(completion(apiKey, body), HttpResponse.BodyHandlers.ofString());
    }

    private Limit tokens() {
        return Objects.requireNonNull(filter.rules().get(0).limit());
    }

    /** Waits (hang guard 10 s) until {@code now} says the settle that follows a response has reached the store. */
    private static void await(LongSupplier now, long expected) {
        Eventually.await(
                Duration.ofSeconds(10), "the store to show " + expected + " left", () -> now.getAsLong() == expected);
    }

    private void awaitTokensLeft(String apiKey, long expected) throws InterruptedException {
        await(() -> limiter.peek("tokens:" + apiKey, tokens(), 1).remaining(), expected);
    }

    @Test
    void eachResponseSettlesTheTokensItUsed() throws Exception {
        HttpResponse<String> r = complete("alice", "{\"prompt\":\"hello world\",\"max_tokens\":98}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("X-Tokens-Used")).hasValue("100");
        assertThat(r.body()).contains("\"total_tokens\":100");
        assertThat(r.headers().firstValue("RateLimit")).hasValue("\"tokens\";r=800;t=12"); // 200 reserved
        awaitTokensLeft("alice", 900); // 100 of the 200 given back
    }

    @Test
    void aKeyThatUsedMoreThanItsEstimateGoesIntoDebtAndWaitsItOut() throws Exception {
        String big = "{\"prompt\":\"a b\",\"max_tokens\":398}"; // 400 tokens, twice the estimate
        assertThat(complete("bob", big).statusCode()).isEqualTo(200);
        awaitTokensLeft("bob", 600);
        assertThat(complete("bob", big).statusCode()).isEqualTo(200);
        awaitTokensLeft("bob", 200);
        assertThat(complete("bob", big).statusCode()).isEqualTo(200); // 200 left: the estimate fits
        // its 400 charged in full: 200 in debt, so 200 more tokens are 400 away, 24 s at 1,000 a minute
        await(() -> limiter.peek("tokens:bob", tokens(), 200).retryAfter().toSeconds(), 24);

        HttpResponse<String> denied = complete("bob", big);
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("24");
        assertThat(denied.body()).contains("Rate limit 'tokens' exceeded: retry in 24 s.");
        ticker.advance(Duration.ofSeconds(24));
        assertThat(complete("bob", big).statusCode()).isEqualTo(200);
    }

    @Test
    void aStreamedCompletionSettlesWhenTheStreamEnds() throws Exception {
        HttpResponse<String> r = complete("carol", "{\"prompt\":\"one two three\",\"max_tokens\":7,\"stream\":true}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/event-stream"));
        assertThat(r.body())
                .startsWith("data: {\"id\":\"cmpl-")
                .contains("data: {\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":7,\"total_tokens\":10}}")
                .endsWith("data: [DONE]\n\n");
        awaitTokensLeft("carol", 990);
    }

    @Test
    void atMostTwoRequestsOfAKeyInFlight() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            calls.add(http.sendAsync(
                    completion("dave", "{\"prompt\":\"hold\",\"max_tokens\":1}"),
                    HttpResponse.BodyHandlers.ofString()));
        }
        assertThat(HELD.tryAcquire(2, 10, TimeUnit.SECONDS)).isTrue(); // both in the model

        HttpResponse<String> third = complete("dave", "{\"prompt\":\"hi\",\"max_tokens\":1}");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(third.body()).contains("Max in flight of rule 'concurrent' reached: 2 requests");
        assertThat(complete("erin", "{\"prompt\":\"hi\",\"max_tokens\":1}").statusCode())
                .isEqualTo(200); // another key has slots of its own

        LET_GO.countDown();
        for (CompletableFuture<HttpResponse<String>> c : calls) {
            assertThat(c.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        // the slots are released as the responses end; a retry is admitted once that has reached the store
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        do {
            status = complete("dave", "{\"prompt\":\"hi\",\"max_tokens\":1}").statusCode();
        } while (status == 429 && System.nanoTime() < deadline);
        assertThat(status).isEqualTo(200);
    }

    @Test
    void aRequestWithoutAnApiKeyIsRefused() throws Exception {
        HttpResponse<String> r = complete(null, "{\"prompt\":\"hi\"}");
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(r.body()).contains("X-Api-Key");
    }
}
