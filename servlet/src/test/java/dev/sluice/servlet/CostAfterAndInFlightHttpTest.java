package dev.sluice.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.tck.Eventually;
import dev.sluice.tck.ForwardingRateLimiter;
import jakarta.servlet.AsyncContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Costs known afterwards and work in flight, in a real Tomcat over real HTTP: the filter reserves an estimate and
 * settles it on what the application reports when the response ends (synchronous or streamed), and holds a slot per
 * request in flight until its response ends.
 */
class CostAfterAndInFlightHttpTest {
    private static TomcatServer server;
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Limit TOKENS = Limit.tokenBucket(1000, Rate.perMinute(1000));

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryRateLimiter store =
            InMemoryRateLimiter.builder().ticker(ticker).build();
    private final ObservedLimiter limiter = new ObservedLimiter(store);

    @BeforeAll
    static void start() throws Exception {
        server = new TomcatServer();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @AfterEach
    void servesOkAgain() {
        server.serve(null);
        limiter.close();
    }

    private static HttpRequest request(String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url(path)))
                .timeout(Duration.ofSeconds(10))
                .header("X-Api-Key", "k1");
        if (headers.length > 0) {
            b.headers(headers);
        }
        return b.build();
    }

    private static HttpResponse<String> get(String path, String... headers) throws Exception {
        return HTTP.send(request(path, headers), HttpResponse.BodyHandlers.ofString());
    }

    private void tokensRule(CostAfter after) {
        server.use(RateLimitFilter.builder(limiter)
                .rule(RateLimitRule.named("tokens")
                        .key(KeyResolver.header("X-Api-Key"))
                        .limit(TOKENS)
                        .costAfter(after)
                        .build())
                .build());
    }

    private long tokensLeft() {
        return store.peek("tokens:k1", TOKENS.named("tokens"), 1).remaining();
    }

    @Test
    void settlesOnTheActualCostTheApplicationSetsInTheRequestAttribute() throws Exception {
        tokensRule(CostAfter.estimate(100));
        server.serve((req, resp) -> {
            req.setAttribute(CostAfter.DEFAULT_ATTRIBUTE, 30L);
            resp.getWriter().write("done");
        });

        HttpResponse<String> r = get("/v1/completions");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("RateLimit")).hasValue("\"tokens\";r=900;t=6"); // the estimate, reserved
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, -70, 970));
        assertThat(tokensLeft()).isEqualTo(970);
    }

    @Test
    void settlesFromTheResponseHeaderAndTheAttributeComesFirst() throws Exception {
        tokensRule(CostAfter.estimate(100).header("X-Tokens-Used"));
        server.serve((req, resp) -> {
            resp.setHeader("X-Tokens-Used", "250");
            if (req.getHeader("X-Also-Attribute") != null) {
                req.setAttribute(CostAfter.DEFAULT_ATTRIBUTE, "40");
            }
        });

        assertThat(get("/v1/completions").statusCode()).isEqualTo(200);
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, 150, 750)); // charged beyond it
        assertThat(get("/v1/completions", "X-Also-Attribute", "yes").statusCode())
                .isEqualTo(200);
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, -60, 710));
        assertThat(tokensLeft()).isEqualTo(710);
    }

    @Test
    void noActualReportedSettlesAtTheEstimateLeavingNothingPending() throws Exception {
        tokensRule(CostAfter.estimate(100).header("X-Tokens-Used"));
        server.serve((req, resp) -> resp.setHeader("X-Tokens-Used", "not a number"));

        assertThat(get("/v1/completions").statusCode()).isEqualTo(200);
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, 0, 900));
        assertThat(tokensLeft()).isEqualTo(900);
    }

    @Test
    void aDenialByAnotherRuleGivesTheEstimateBack() throws Exception {
        server.use(RateLimitFilter.builder(limiter)
                .rule(RateLimitRule.named("tokens")
                        .key(KeyResolver.header("X-Api-Key"))
                        .limit(TOKENS)
                        .costAfter(CostAfter.estimate(100))
                        .build())
                .rule(RateLimitRule.named("requests")
                        .key(KeyResolver.header("X-Api-Key"))
                        .limit(Limit.tokenBucket(1, Rate.perHour(1)))
                        .build())
                .build());

        assertThat(get("/v1/completions").statusCode()).isEqualTo(200);
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, 0, 900));
        HttpResponse<String> denied = get("/v1/completions");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.body()).contains("\"limit\":\"requests\"");
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, -100, 900)); // reserved, given back
        assertThat(tokensLeft()).isEqualTo(900);
    }

    @Test
    void aStreamedResponseSettlesAndReleasesWhenItCompletes() throws Exception {
        server.use(RateLimitFilter.builder(limiter)
                .rule(RateLimitRule.named("tokens")
                        .key(KeyResolver.header("X-Api-Key"))
                        .limit(TOKENS)
                        .costAfter(CostAfter.estimate(100))
                        .maxInFlight(1)
                        .build())
                .build());
        CountDownLatch streaming = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        server.serve((req, resp) -> {
            AsyncContext async = req.startAsync();
            async.setTimeout(0);
            async.start(() -> {
                try {
                    resp.getWriter().write("first tokens ");
                    resp.flushBuffer();
                    streaming.countDown();
                    if (finish.await(10, TimeUnit.SECONDS)) {
                        req.setAttribute(CostAfter.DEFAULT_ATTRIBUTE, 10);
                        resp.getWriter().write("last tokens");
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                } finally {
                    async.complete();
                }
            });
        });

        CompletableFuture<HttpResponse<String>> stream =
                HTTP.sendAsync(request("/v1/completions"), HttpResponse.BodyHandlers.ofString());
        assertThat(streaming.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(tokensLeft()).isEqualTo(900); // the estimate is held while the response streams
        HttpResponse<String> second = get("/v1/completions");
        assertThat(second.statusCode()).isEqualTo(429); // its slot too
        assertThat(second.body()).contains("Max in flight of rule 'tokens' reached");
        assertThat(limiter.pending()).isZero(); // nothing of the first settled or released yet

        finish.countDown();
        assertThat(stream.get(10, TimeUnit.SECONDS).body()).isEqualTo("first tokens last tokens");
        assertThat(limiter.nextRelease()).isTrue();
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, -90, 990));
        assertThat(tokensLeft()).isEqualTo(990);
        assertThat(get("/v1/completions").statusCode()).isEqualTo(200);
    }

    @Test
    void maxInFlightAdmitsExactlyTheMaximumOfConcurrentSlowRequests() throws Exception {
        server.use(RateLimitFilter.builder(limiter)
                .rule(RateLimitRule.named("concurrent")
                        .key(KeyResolver.header("X-Api-Key"))
                        .maxInFlight(3)
                        .build())
                .build());
        AtomicInteger admitted = new AtomicInteger();
        Semaphore entered = new Semaphore(0);
        CountDownLatch finish = new CountDownLatch(1);
        server.serve((req, resp) -> {
            admitted.incrementAndGet();
            entered.release();
            try {
                assertThat(finish.await(10, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            resp.getWriter().write("slow");
        });

        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            calls.add(HTTP.sendAsync(request("/v1/completions"), HttpResponse.BodyHandlers.ofString()));
        }
        assertThat(entered.tryAcquire(3, 10, TimeUnit.SECONDS)).isTrue();
        // the three admitted are held until finish, so the five others must be answered first
        Eventually.await(
                Duration.ofSeconds(10),
                "the five calls over the maximum to be answered",
                () -> calls.stream().filter(CompletableFuture::isDone).count() >= 5);
        List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> c : calls) {
            if (!c.isDone()) {
                running.add(c);
                continue;
            }
            HttpResponse<String> r = c.get();
            assertThat(r.statusCode()).isEqualTo(429);
            assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(r.body()).contains("Max in flight of rule 'concurrent' reached: 3 requests");
        }
        assertThat(running).hasSize(3);
        finish.countDown();
        for (CompletableFuture<HttpResponse<String>> c : running) {
            assertThat(c.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        assertThat(admitted).hasValue(3);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.nextRelease()).isTrue();
        }
        assertThat(get("/v1/completions").statusCode()).isEqualTo(200); // every slot given back
        assertThat(admitted).hasValue(4);
    }

    @Test
    void anExceptionInTheChainStillReleasesAndSettles() throws Exception {
        server.use(RateLimitFilter.builder(limiter)
                .rule(RateLimitRule.named("tokens")
                        .key(KeyResolver.header("X-Api-Key"))
                        .limit(TOKENS)
                        .costAfter(CostAfter.estimate(100))
                        .maxInFlight(1)
                        .build())
                .build());
        server.serve((req, resp) -> {
            req.setAttribute(CostAfter.DEFAULT_ATTRIBUTE, 5);
            throw new IllegalStateException("the model crashed");
        });

        assertThat(get("/v1/completions").statusCode()).isEqualTo(500);
        assertThat(limiter.nextRelease()).isTrue();
        assertThat(limiter.nextSettle()).isEqualTo(new Settlement(true, 100, -95, 995));
        server.serve(null);
        assertThat(get("/v1/completions").statusCode()).isEqualTo(200);
    }

    @Test
    void aMaxInFlightOnALimiterWithoutSlotsFailsWhenTheFilterIsBuilt() {
        RateLimiter withoutSlots = new WithoutSlots(store); // RateLimiter.inFlight()'s default: unsupported
        assertThatThrownBy(() -> RateLimitFilter.builder(withoutSlots)
                        .rule(RateLimitRule.named("concurrent").maxInFlight(2).build())
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "rule 'concurrent' has a max in flight, but WithoutSlots does not limit" + " work in flight");
    }

    /** A store written elsewhere: it decides, but has no slots in flight (as the interface's default says). */
    private static final class WithoutSlots extends ForwardingRateLimiter {
        WithoutSlots(RateLimiter store) {
            super(store);
        }

        @Override
        public InFlightLimiter inFlight() {
            throw new UnsupportedOperationException(
                    "WithoutSlots does not limit work in flight: use a store of Sluice");
        }

        @Override
        public void close() {} // the test's store is closed by the test
    }
}
