package dev.sluice.gateway;

import static dev.sluice.gateway.Http.as;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import dev.sluice.gateway.testapp.GatewayTestApp;
import dev.sluice.tck.Eventually;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The {@code SluiceLimit} route filter in a real gateway in front of a real downstream, over HTTP, on a frozen clock:
 * the downstream reports the tokens each response used in {@code X-Tokens-Used}, which the gateway settles when the
 * exchange ends; and it holds requests of {@code /hold} until the test lets them go, to keep them in flight.
 */
@SpringBootTest(
        classes = {GatewayTestApp.class, SluiceLimitGatewayTest.FrozenClock.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.cloud.gateway.server.webflux.routes[0].id=llm",
            "spring.cloud.gateway.server.webflux.routes[0].uri=${backend.uri}",
            "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/llm/**",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].name=SluiceLimit",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.key-resolver=#{@userKeyResolver}",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.requests_per_unit=1000",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.unit=minute",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.algorithm=token_bucket",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.estimate=100",
            "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.cost-header=X-Tokens-Used",
            "spring.cloud.gateway.server.webflux.routes[1].id=hold",
            "spring.cloud.gateway.server.webflux.routes[1].uri=${backend.uri}",
            "spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/hold/**",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].name=SluiceLimit",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].args.key-resolver=#{@userKeyResolver}",
            "spring.cloud.gateway.server.webflux.routes[1].filters[0].args.max-in-flight=2"
        })
class SluiceLimitGatewayTest {
    private static final Semaphore HELD = new Semaphore(0);
    private static final CountDownLatch LET_GO = new CountDownLatch(1);
    private static final HttpServer DOWNSTREAM = downstream();
    private static final Limit TOKENS = new LimitSpec(Algorithm.TOKEN_BUCKET, 1000, Duration.ofMinutes(1), null)
            .toLimit()
            .named("gateway-cost-after");

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter store;

    @Autowired
    ManualTicker ticker;

    @TestConfiguration(proxyBeanMethods = false)
    static class FrozenClock {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2025-01-01T00:00:00Z"));
        }
    }

    /** Answers 200; {@code ?used=N} reports N tokens used; {@code /hold} waits for the test first. */
    private static HttpServer downstream() {
        try {
            HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            s.setExecutor(Executors.newCachedThreadPool());
            s.createContext("/", exchange -> {
                URI uri = exchange.getRequestURI();
                if (uri.getPath().startsWith("/hold")) {
                    HELD.release();
                    try {
                        LET_GO.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                String q = uri.getQuery();
                if (q != null && q.startsWith("used=")) {
                    exchange.getResponseHeaders().set("X-Tokens-Used", q.substring("used=".length()));
                }
                byte[] body = "completion".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            s.start();
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add(
                "backend.uri",
                () -> "http://127.0.0.1:" + DOWNSTREAM.getAddress().getPort());
    }

    @AfterAll
    static void stopDownstream() {
        DOWNSTREAM.stop(0);
    }

    /** Waits (hang guard 10 s) for the settle that follows the exchange to reach the store. */
    private static void await(LongSupplier now, long expected) {
        Eventually.await(
                Duration.ofSeconds(10), "the store to show " + expected + " left", () -> now.getAsLong() == expected);
    }

    private long tokensLeft(String user) {
        return store.peek("llm." + user, TOKENS, 1).remaining();
    }

    @Test
    void settlesOnTheTokensTheDownstreamReportsInItsHeader() throws Exception {
        HttpResponse<String> r = as("ann", port, "/llm/complete?used=30");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("completion");
        await(() -> tokensLeft("ann"), 970);
    }

    @Test
    void aResponseWithoutTheHeaderSettlesAtTheEstimate() throws Exception {
        assertThat(as("ben", port, "/llm/complete").statusCode()).isEqualTo(200);
        await(() -> tokensLeft("ben"), 900);
        assertThat(tokensLeft("ben")).isEqualTo(900);
    }

    @Test
    void aKeyThatUsedItAllIsDeniedUntilTheEstimateFitsAgain() throws Exception {
        assertThat(as("cid", port, "/llm/complete?used=1000").statusCode()).isEqualTo(200);
        await(() -> tokensLeft("cid"), 0);
        HttpResponse<String> denied = as("cid", port, "/llm/complete?used=1");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("6"); // 100 tokens at 1,000 a minute
        assertThat(denied.body()).contains("Rate limit 'llm' exceeded: retry in 6 s.");
        ticker.advance(Duration.ofSeconds(6));
        assertThat(as("cid", port, "/llm/complete?used=1").statusCode()).isEqualTo(200);
    }

    @Test
    void atMostTwoExchangesOfAKeyInFlightAndTheSlotsComeBackWhenTheyEnd() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            calls.add(client.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/hold/work"))
                            .header("X-User", "dee")
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        assertThat(HELD.tryAcquire(2, 10, TimeUnit.SECONDS)).isTrue(); // both downstream

        HttpResponse<String> third = as("dee", port, "/hold/work");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(third.body()).contains("Max in flight of route 'hold' reached: 2 requests");
        assertThat(HELD.availablePermits()).isZero(); // the third never reached the downstream

        LET_GO.countDown();
        for (CompletableFuture<HttpResponse<String>> c : calls) {
            assertThat(c.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        do { // the slots are released as the exchanges end
            status = as("dee", port, "/hold/work").statusCode();
        } while (status == 429 && System.nanoTime() < deadline);
        assertThat(status).isEqualTo(200);
    }

    @Test
    void aRequestWithoutAKeyIsRefused() {
        assertThat(Http.get(port, "/hold/work").statusCode()).isEqualTo(403);
    }
}
