package dev.sluice.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.servlet.ClientIpResolver.Header;
import dev.sluice.servlet.RateLimitListener.Outcome;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The filter in a real Tomcat, called over real HTTP; the limiter's clock is a {@link ManualTicker}. */
class RateLimitFilterHttpTest {
    private static TomcatServer server;
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final InMemoryRateLimiter limiter =
            InMemoryRateLimiter.builder().ticker(ticker).build();
    private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        server = new TomcatServer();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @BeforeEach
    void clearOutcomes() {
        outcomes.clear();
    }

    private RateLimitFilter.Builder filter() {
        return RateLimitFilter.builder(limiter).listener((req, rules, outcome, d) -> outcomes.add(outcome));
    }

    private static HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(server.url(path))).timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int status(String path, String... headers) throws Exception {
        return get(path, headers).statusCode();
    }

    @Test
    void perIpLimitAnswers429WithExactHeadersAndProblemBody() throws Exception {
        server.use(filter().rule(RateLimitRule.named("per-ip")
                        .paths("/api/**")
                        .limit(Limit.tokenBucket(2, Rate.perMinute(2)))
                        .build())
                .build());

        HttpResponse<String> first = get("/api/hello");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("ok");
        assertThat(first.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=1;t=30");
        assertThat(first.headers().firstValue("RateLimit-Policy")).isEmpty();
        assertThat(first.headers().firstValue("Retry-After")).isEmpty();
        assertThat(status("/api/hello")).isEqualTo(200);

        HttpResponse<String> denied = get("/api/hello");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("30");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=60");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=2;w=60");
        assertThat(denied.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit 'per-ip' exceeded: retry in 30 s.\",\"instance\":\"/api/hello\","
                        + "\"limit\":\"per-ip\",\"retryAfterSeconds\":30}");
        assertThat(outcomes).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.DENIED);

        assertThat(status("/other")).isEqualTo(200); // not the rule's path
        ticker.advance(Duration.ofSeconds(30));
        assertThat(status("/api/hello")).isEqualTo(200);
    }

    @Test
    void untrustedClientCannotChooseItsKeyWithXForwardedFor() throws Exception {
        server.use(filter().rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(2, Rate.perHour(1)))
                        .build())
                .build());
        assertThat(status("/a", "X-Forwarded-For", "198.51.100.1")).isEqualTo(200);
        assertThat(status("/a", "X-Forwarded-For", "198.51.100.2")).isEqualTo(200);
        assertThat(status("/a", "X-Forwarded-For", "198.51.100.3", "Forwarded", "for=198.51.100.3"))
                .isEqualTo(429);
    }

    @Test
    void trustedProxysRightmostUntrustedHopIsTheKey() throws Exception {
        server.use(filter().trustedProxies("127.0.0.1/32")
                .rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(1, Rate.perHour(1)))
                        .build())
                .build());
        assertThat(status("/a", "X-Forwarded-For", "198.51.100.1")).isEqualTo(200);
        assertThat(status("/a", "X-Forwarded-For", "198.51.100.2")).isEqualTo(200);
        // a client spoofing an address on the left is still counted as the hop the proxy saw
        assertThat(status("/a", "X-Forwarded-For", "203.0.113.77, 198.51.100.1"))
                .isEqualTo(429);
        assertThat(status("/a", "X-Forwarded-For", "203.0.113.77, 198.51.100.3"))
                .isEqualTo(200);
    }

    @Test
    void forwardedHeaderWithIpv6PortsAndZoneIdsIsOneClient() throws Exception {
        server.use(filter().clientIp(ClientIpResolver.trusting(Header.FORWARDED, List.of("127.0.0.0/8")))
                .rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(2, Rate.perHour(1)))
                        .build())
                .build());
        assertThat(status("/a", "Forwarded", "for=\"[2001:db8:cafe::17]:4711\";proto=https"))
                .isEqualTo(200);
        assertThat(status("/a", "Forwarded", "for=\"[2001:DB8:CAFE:0::17%25eth0]\""))
                .isEqualTo(200);
        assertThat(status("/a", "Forwarded", "for=\"[2001:db8:cafe::17]\"")).isEqualTo(429);
        assertThat(status("/a", "Forwarded", "for=\"[2001:db8:cafe::18]\"")).isEqualTo(200);
        // X-Forwarded-For is not the header these proxies write: ignored
        assertThat(status("/a", "X-Forwarded-For", "2001:db8:cafe::17")).isEqualTo(200); // keyed as 127.0.0.1
    }

    @Test
    void malformedAndAbsurdlyLongForwardingHeadersFallBackToTheProxy() throws Exception {
        server.use(filter().trustedProxies("127.0.0.1")
                .rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(3, Rate.perHour(1)))
                        .build())
                .build());
        assertThat(status("/a", "X-Forwarded-For", "x".repeat(6000))).isEqualTo(200);
        assertThat(status("/a", "X-Forwarded-For", ",".repeat(6000))).isEqualTo(200);
        assertThat(status("/a", "X-Forwarded-For", "[::1]:99999999, %%%")).isEqualTo(200);
        // all three were counted as the proxy, 127.0.0.1, whose bucket of 3 is now empty
        assertThat(status("/a")).isEqualTo(429);
    }

    @Test
    void perUserLimitCountsEachPrincipalAndSkipsAnonymousCalls() throws Exception {
        server.use(filter().rule(RateLimitRule.named("per-user")
                        .key(KeyResolver.principal())
                        .limit(Limit.fixedWindow(1, Duration.ofMinutes(1)))
                        .build())
                .build());
        assertThat(status("/a", "X-Test-User", "alice")).isEqualTo(200);
        assertThat(status("/a", "X-Test-User", "alice")).isEqualTo(429);
        assertThat(status("/a", "X-Test-User", "bob")).isEqualTo(200);
        assertThat(status("/a")).isEqualTo(200);
        assertThat(status("/a")).isEqualTo(200);
    }

    @Test
    void tierAttributeChoosesTheLimitAndUnknownTiersGetTheDefault() throws Exception {
        server.use(filter().rule(RateLimitRule.named("per-user")
                        .key(KeyResolver.principal())
                        .tier("free", Limit.tokenBucket(1, Rate.perHour(1)))
                        .tier("pro", Limit.tokenBucket(3, Rate.perHour(3)))
                        .build())
                .build());
        for (int i = 0; i < 3; i++) {
            assertThat(status("/a", "X-Test-User", "paying", "X-Test-Tier", "pro"))
                    .isEqualTo(200);
        }
        HttpResponse<String> proDenied = get("/a", "X-Test-User", "paying", "X-Test-Tier", "pro");
        assertThat(proDenied.statusCode()).isEqualTo(429);
        assertThat(proDenied.headers().firstValue("RateLimit-Policy")).hasValue("\"per-user/pro\";q=3;w=3600");
        assertThat(status("/a", "X-Test-User", "cheap", "X-Test-Tier", "free")).isEqualTo(200);
        assertThat(status("/a", "X-Test-User", "cheap", "X-Test-Tier", "free")).isEqualTo(429);
        assertThat(status("/a", "X-Test-User", "sneaky", "X-Test-Tier", "platinum"))
                .isEqualTo(200);
        assertThat(status("/a", "X-Test-User", "sneaky", "X-Test-Tier", "platinum"))
                .isEqualTo(429);
    }

    @Test
    void perIpAndPerUserAreTakenAllOrNothing() throws Exception {
        server.use(filter().rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(3, Rate.perHour(3)))
                        .build())
                .rule(RateLimitRule.named("per-user")
                        .key(KeyResolver.principal())
                        .limit(Limit.tokenBucket(1, Rate.perHour(1)))
                        .build())
                .build());
        assertThat(status("/a", "X-Test-User", "alice")).isEqualTo(200);
        HttpResponse<String> denied = get("/a", "X-Test-User", "alice");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"per-ip\";q=3;w=3600, \"per-user\";q=1;w=3600");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=0;t=3600");
        // the denied request took nothing from per-ip: two more fit from this address
        assertThat(status("/a", "X-Test-User", "bob")).isEqualTo(200);
        assertThat(status("/a")).isEqualTo(200);
        HttpResponse<String> ipDenied = get("/a", "X-Test-User", "carol");
        assertThat(ipDenied.statusCode()).isEqualTo(429);
        assertThat(ipDenied.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=3600");
        assertThat(limiter.peek("per-user:carol", Limit.tokenBucket(1, Rate.perHour(1)))
                        .remaining())
                .isEqualTo(1);
    }

    @Test
    void shadowModeLetsWouldBeDenialsThroughWithoutHeaders() throws Exception {
        RateLimitFilter f = filter().shadowMode(true)
                .rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(1, Rate.perHour(1)))
                        .build())
                .build();
        server.use(f);
        HttpResponse<String> first = get("/a");
        HttpResponse<String> second = get("/a");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.body()).isEqualTo("ok");
        assertThat(first.headers().firstValue("RateLimit")).isEmpty();
        assertThat(second.headers().firstValue("RateLimit")).isEmpty();
        assertThat(outcomes).containsExactly(Outcome.ALLOWED, Outcome.SHADOW_DENIED);
        f.setShadowMode(false);
        assertThat(status("/a")).isEqualTo(429);
    }

    @Test
    void offSwitchLetsEverythingThroughUntouchedUntilTurnedBackOn() throws Exception {
        RateLimitFilter f = filter().enabled(false)
                .rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(1, Rate.perHour(1)))
                        .build())
                .build();
        server.use(f);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = get("/a");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("RateLimit")).isEmpty();
        }
        assertThat(outcomes).isEmpty();
        f.setEnabled(true);
        assertThat(status("/a")).isEqualTo(200);
        assertThat(status("/a")).isEqualTo(429);
    }

    @Test
    void costFromTheRequestIsSpentAndAnImpossibleCostIs400() throws Exception {
        server.use(filter().rule(RateLimitRule.named("batch")
                        .cost(CostResolver.fromHeader("X-Batch-Size", 1))
                        .limit(Limit.tokenBucket(10, Rate.perHour(10)))
                        .build())
                .build());
        HttpResponse<String> r = get("/a", "X-Batch-Size", "7");
        assertThat(r.headers().firstValue("RateLimit")).hasValue("\"batch\";r=3;t=2520");
        HttpResponse<String> tooBig = get("/a", "X-Batch-Size", "11");
        assertThat(tooBig.statusCode()).isEqualTo(400);
        assertThat(tooBig.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                        + "\"detail\":\"cost 11 of rule 'batch' exceeds capacity 10 of limit 'batch': it can never be granted;"
                        + " send a smaller cost\",\"instance\":\"/a\"}");
        assertThat(status("/a", "X-Batch-Size", "abc")).isEqualTo(400);
        assertThat(status("/a", "X-Batch-Size", "3")).isEqualTo(200);
        assertThat(status("/a")).isEqualTo(429);
    }

    @Test
    void limiterThatThrowsLetsTheRequestThrough() throws Exception {
        server.use(RateLimitFilter.builder(new BrokenLimiter())
                .listener((req, rules, outcome, d) -> outcomes.add(outcome))
                .rule(RateLimitRule.named("per-ip")
                        .limit(Limit.tokenBucket(1, Rate.perHour(1)))
                        .build())
                .build());
        for (int i = 0; i < 10; i++) {
            assertThat(status("/a")).isEqualTo(200);
        }
        assertThat(outcomes).hasSize(10).containsOnly(Outcome.LIMITER_FAILED);
    }

    @Test
    void storeThatCannotOpenIsDecidedByTheFailurePolicyAndTheDenialSaysSo() throws Exception {
        FailSafeRateLimiter failClosed = FailSafeRateLimiter.builder(() -> {
                    throw new StoreException(
                            "store at 192.0.2.1:6379 refused the connection", null, Degradation.UNAVAILABLE);
                })
                .policy(FailurePolicy.FAIL_CLOSED)
                .probeInterval(Duration.ofSeconds(5))
                .build();
        try (failClosed) {
            server.use(RateLimitFilter.builder(failClosed)
                    .rule(RateLimitRule.named("per-ip")
                            .limit(Limit.tokenBucket(5, Rate.perHour(5)))
                            .build())
                    .build());
            HttpResponse<String> r = get("/a");
            assertThat(r.statusCode()).isEqualTo(429);
            assertThat(r.headers().firstValue("Retry-After")).hasValue("5");
            assertThat(r.body())
                    .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                            + "\"detail\":\"Rate limit 'per-ip' could not be checked (unavailable) and the failure policy denies:"
                            + " retry in 5 s.\",\"instance\":\"/a\",\"limit\":\"per-ip\",\"retryAfterSeconds\":5,"
                            + "\"degradation\":\"unavailable\"}");
        }
    }

    @Test
    void longKeyValuesAreHashedIntoBoundedKeys() {
        String key = RateLimitFilter.key("per-key", "k".repeat(5000));
        assertThat(key).startsWith("per-key:sha256:").hasSize("per-key:sha256:".length() + 64);
        assertThat(RateLimitFilter.key("per-key", "abc")).isEqualTo("per-key:abc");
    }

    /** A limiter whose every decision fails, as a misconfigured or broken one would. */
    private static final class BrokenLimiter implements RateLimiter {
        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            throw new IllegalStateException("broken on purpose");
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return CompletableFuture.failedFuture(new IllegalStateException("broken on purpose"));
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            throw new IllegalStateException("broken on purpose");
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            throw new IllegalStateException("broken on purpose");
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            throw new IllegalStateException("broken on purpose");
        }

        @Override
        public void reset(String key, Limit limit) {
            throw new IllegalStateException("broken on purpose");
        }

        @Override
        public void close() {}
    }
}
