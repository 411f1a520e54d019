package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.redis.RedisRateLimiter;
import dev.sluice.redis.RedisServer;
import dev.sluice.spring.DecisionCounts;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.support.GenericApplicationContext;

/** The limiter without a gateway: how it reads route arguments, what it refuses, and how it asks the store. */
class SluiceRateLimiterTest {
    private final InMemoryRateLimiter memory = InMemoryRateLimiter.builder()
            .ticker(ManualTicker.at(Instant.parse("2025-01-01T00:00:00Z")))
            .build();

    private static ConfigurationService configurationService() {
        return new ConfigurationService(
                new DefaultListableBeanFactory(), ApplicationConversionService::new, () -> null);
    }

    private static FilterArgsEvent args(String routeId, Map<String, Object> args) {
        return new FilterArgsEvent(new Object(), routeId, args);
    }

    @Test
    void routeArgumentsBindInEitherSpelling() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(memory, configurationService());
        limiter.onApplicationEvent(args(
                "snake",
                Map.of(
                        "sluice-rate-limiter.requests_per_unit",
                        "7",
                        "sluice-rate-limiter.unit",
                        "minute",
                        "sluice-rate-limiter.algorithm",
                        "gcra",
                        "sluice-rate-limiter.burst",
                        "3")));
        limiter.onApplicationEvent(args(
                "camel",
                Map.of(
                        "sluice-rate-limiter.replenishRate",
                        "2",
                        "sluice-rate-limiter.burstCapacity",
                        "4",
                        "sluice-rate-limiter.requestedTokens",
                        "2")));
        limiter.onApplicationEvent(args(
                "kebab", Map.of("sluice-rate-limiter.requests-per-unit", "5", "sluice-rate-limiter.window", "1500ms")));
        limiter.onApplicationEvent(args("other", Map.of("redis-rate-limiter.replenishRate", "2")));

        assertThat(limiter.getConfig().get("snake").resolve("snake").limit())
                .isEqualTo(Limit.gcra(dev.sluice.Rate.perMinute(7), 3).named(RouteLimit.NAME));
        RouteLimit camel = limiter.getConfig().get("camel").resolve("camel");
        assertThat(camel.limit())
                .isEqualTo(Limit.tokenBucket(4, dev.sluice.Rate.perSecond(2)).named(RouteLimit.NAME));
        assertThat(camel.cost()).isEqualTo(2);
        assertThat(limiter.getConfig().get("kebab").resolve("kebab").limit())
                .as("fixed_window: Sluice's default algorithm")
                .isEqualTo(Limit.fixedWindow(5, Duration.ofMillis(1500)).named(RouteLimit.NAME));
        assertThat(limiter.getConfig())
                .as("another limiter's arguments are not ours")
                .doesNotContainKey("other");
    }

    /** A route whose arguments are rebound with other numbers keeps what each key spent: no fresh burst. */
    @Test
    void aRouteWhoseLimitChangesKeepsWhatEachKeySpent() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(memory, configurationService());
        for (long permits : new long[] {5, 3, 8}) {
            limiter.onApplicationEvent(args(
                    "api",
                    Map.of(
                            "sluice-rate-limiter.requests_per_unit",
                            Long.toString(permits),
                            "sluice-rate-limiter.unit",
                            "minute")));
            int admitted = 0;
            while (admitted <= permits
                    && limiter.isAllowed("api", "client").block().isAllowed()) {
                admitted++;
            }
            // 5 of 5; then 3 with 5 spent: none; then 8 with 5 spent: 3
            assertThat(admitted).as("%d per minute", permits).isEqualTo(permits == 5 ? 5 : permits == 3 ? 0 : 3);
        }
    }

    @Test
    void aBadRouteFailsAsItLoadsNamingTheRouteAndTheFix() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(memory, configurationService());
        assertThatThrownBy(() -> limiter.onApplicationEvent(args(
                        "api",
                        Map.of(
                                "sluice-rate-limiter.replenishRate",
                                "1",
                                "sluice-rate-limiter.burstCapacity",
                                "2",
                                "sluice-rate-limiter.requestedTokens",
                                "3"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("route 'api': sluice-rate-limiter.requestedTokens 3 exceeds burstCapacity 2: no request"
                        + " could ever pass; raise burstCapacity or lower requestedTokens");
        assertThatThrownBy(
                        () -> limiter.onApplicationEvent(args("api", Map.of("sluice-rate-limiter.burstCapacity", "2"))))
                .hasMessageStartingWith("route 'api': sluice-rate-limiter.replenishRate 0 must be at least 1");
        assertThatThrownBy(() -> limiter.onApplicationEvent(args(
                        "api", Map.of("sluice-rate-limiter.replenishRate", "1", "sluice-rate-limiter.unit", "minute"))))
                .hasMessageContaining("has both replenishRate/burstCapacity (RedisRateLimiter's words) and"
                        + " requests_per_unit/unit/window/algorithm/burst (Sluice's)");
        assertThatThrownBy(() -> limiter.onApplicationEvent(args(
                        "api",
                        Map.of("sluice-rate-limiter.requests_per_unit", "5", "sluice-rate-limiter.unit", "fortnight"))))
                .hasMessageStartingWith("route 'api': sluice-rate-limiter.unit: unknown unit 'fortnight'");
        assertThatThrownBy(() -> limiter.onApplicationEvent(args(
                        "api",
                        Map.of(
                                "sluice-rate-limiter.requests_per_unit",
                                "5",
                                "sluice-rate-limiter.unit",
                                "minute",
                                "sluice-rate-limiter.window",
                                "90s"))))
                .hasMessageContaining("both unit and window are set");
        assertThatThrownBy(() -> limiter.onApplicationEvent(args(
                        "api",
                        Map.of(
                                "sluice-rate-limiter.requests_per_unit",
                                "5",
                                "sluice-rate-limiter.unit",
                                "minute",
                                "sluice-rate-limiter.burst",
                                "9"))))
                .hasMessageContaining("'burst' applies to token_bucket and gcra, not fixed_window");
        assertThatThrownBy(() -> limiter.onApplicationEvent(
                        args("defaultFilters", Map.of("sluice-rate-limiter.unit", "minute"))))
                .hasMessageStartingWith("default-filters: sluice-rate-limiter.requests_per_unit is missing");
    }

    @Test
    void decisionsGoThroughTheAsyncCallAndNothingWaitsForTheStore() {
        CompletableFuture<Decision> pending = new CompletableFuture<>();
        AtomicReference<String> asked = new AtomicReference<>();
        RateLimiter store = new RefusingBlockingCalls() {
            @Override
            public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
                asked.set(key + " " + limit + " cost " + cost);
                return pending;
            }
        };
        SluiceRateLimiter limiter = new SluiceRateLimiter(
                store,
                new SluiceRateLimiter.Config()
                        .setReplenishRate(10)
                        .setBurstCapacity(20)
                        .setRequestedTokens(2));
        AtomicReference<Response> answer = new AtomicReference<>();

        limiter.isAllowed("api", "alice").subscribe(answer::set); // returns at once, on this thread

        assertThat(asked.get()).isEqualTo("api.alice gateway-route=tokenBucket(20, 10/1s) cost 2");
        assertThat(answer.get()).as("no answer before the store's").isNull();
        pending.complete(new Decision(true, 20, 18, 0, 200_000_000));
        assertThat(answer.get().isAllowed()).isTrue();
        assertThat(answer.get().getHeaders())
                .containsExactly(
                        Map.entry("X-RateLimit-Remaining", "18"),
                        Map.entry("X-RateLimit-Replenish-Rate", "10"),
                        Map.entry("X-RateLimit-Burst-Capacity", "20"),
                        Map.entry("X-RateLimit-Requested-Tokens", "2"),
                        Map.entry("RateLimit-Policy", "\"api\";q=20;w=2"),
                        Map.entry("RateLimit", "\"api\";r=18;t=1"));
    }

    @Test
    void includeHeadersFalseLeavesEveryHeaderOut() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(
                memory, new SluiceRateLimiter.Config().setReplenishRate(1).setBurstCapacity(1));
        limiter.setIncludeHeaders(false);
        assertThat(limiter.isAllowed("api", "alice").block().getHeaders()).isEmpty();
        Response denied = limiter.isAllowed("api", "alice").block();
        assertThat(denied.isAllowed()).isFalse();
        assertThat(denied.getHeaders()).isEmpty();
    }

    @Test
    void headerNamesAreRedisRateLimitersAndCanBeRenamedAsThere() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(
                memory, new SluiceRateLimiter.Config().setReplenishRate(1).setBurstCapacity(3));
        limiter.setRemainingHeader("X-Left");
        assertThat(limiter.isAllowed("api", "alice").block().getHeaders())
                .containsEntry("X-Left", "2")
                .doesNotContainKey("X-RateLimit-Remaining");
    }

    @Test
    void aRouteOwnConfigWinsOverTheDefaultOne() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(
                memory, new SluiceRateLimiter.Config().setReplenishRate(1).setBurstCapacity(3));
        limiter.getConfig()
                .put(
                        "special",
                        new SluiceRateLimiter.Config().setReplenishRate(1).setBurstCapacity(9));
        assertThat(limiter.isAllowed("special", "alice").block().getHeaders())
                .containsEntry("X-RateLimit-Remaining", "8");
        assertThat(limiter.isAllowed("any", "alice").block().getHeaders()).containsEntry("X-RateLimit-Remaining", "2");
    }

    @Test
    void aLimiterWithADefaultConfigDefinedAsABeanReadsRouteArgumentsToo() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(
                memory, new SluiceRateLimiter.Config().setReplenishRate(1).setBurstCapacity(3));
        GenericApplicationContext context = new GenericApplicationContext();
        context.registerBean(ConfigurationService.class, SluiceRateLimiterTest::configurationService);
        context.refresh();
        limiter.setApplicationContext(context);
        limiter.onApplicationEvent(args(
                "special", Map.of("sluice-rate-limiter.replenishRate", "1", "sluice-rate-limiter.burstCapacity", "9")));
        assertThat(limiter.isAllowed("special", "alice").block().getHeaders())
                .containsEntry("X-RateLimit-Burst-Capacity", "9");
        assertThat(limiter.isAllowed("any", "alice").block().getHeaders())
                .containsEntry("X-RateLimit-Burst-Capacity", "3");
        context.close();
    }

    @Test
    void aFailurePolicysAnswerClaimsNothingItDoesNotKnow() throws Exception {
        int closed = RedisServer.freePort(); // nothing listens: the store is down from the start
        for (FailurePolicy policy : List.of(FailurePolicy.FAIL_OPEN, FailurePolicy.FAIL_CLOSED)) {
            try (FailSafeRateLimiter store = FailSafeRateLimiter.builder(
                            () -> RedisRateLimiter.create("redis://127.0.0.1:" + closed))
                    .policy(policy)
                    .startupWait(Duration.ZERO)
                    .build()) {
                DecisionCounts counts = new DecisionCounts();
                SluiceRateLimiter limiter = new SluiceRateLimiter(
                                store,
                                new SluiceRateLimiter.Config()
                                        .setReplenishRate(1)
                                        .setBurstCapacity(5))
                        .countingIn(counts);
                Response r = limiter.isAllowed("api", "alice").block(Duration.ofSeconds(30));

                assertThat(r.isAllowed()).isEqualTo(policy == FailurePolicy.FAIL_OPEN);
                Map<String, String> expected = new java.util.LinkedHashMap<>();
                expected.put("X-RateLimit-Remaining", "-1"); // RedisRateLimiter's answer on a Redis error
                expected.put("X-RateLimit-Replenish-Rate", "1");
                expected.put("X-RateLimit-Burst-Capacity", "5");
                expected.put("X-RateLimit-Requested-Tokens", "1");
                expected.put("RateLimit-Policy", "\"api\";q=5;w=5"); // configuration: known
                if (policy == FailurePolicy.FAIL_CLOSED) {
                    expected.put("Retry-After", "1"); // the policy's: the store is tried again in 200 ms
                }
                expected.put("Sluice-Degraded", "unavailable");
                assertThat(r.getHeaders())
                        .as("%s: no RateLimit, whose remaining value is unknown", policy)
                        .containsExactlyEntriesOf(expected);
                assertThat(counts.outcomes("api"))
                        .containsEntry(policy == FailurePolicy.FAIL_OPEN ? "allowed" : "denied", 1L);
            }
        }
    }

    @Test
    void aStoreThatThrowsLetsTheRequestThroughMarkedDegraded() {
        try (RedisServer redis = RedisServer.start();
                RedisRateLimiter store = RedisRateLimiter.create(redis.uri())) {
            DecisionCounts counts = new DecisionCounts();
            SluiceRateLimiter limiter = new SluiceRateLimiter(
                            store,
                            new SluiceRateLimiter.Config().setReplenishRate(1).setBurstCapacity(5))
                    .countingIn(counts);
            assertThat(limiter.isAllowed("api", "alice")
                            .block(Duration.ofSeconds(30))
                            .getHeaders())
                    .containsEntry("X-RateLimit-Remaining", "4")
                    .containsKey("RateLimit");
            redis.stop(); // no failure policy in front of it: the store's call fails

            Response r = limiter.isAllowed("api", "alice").block(Duration.ofSeconds(30));
            assertThat(r.isAllowed())
                    .as("as RedisRateLimiter and the servlet filter: a limiter that fails lets"
                            + " the request through")
                    .isTrue();
            assertThat(r.getHeaders())
                    .containsEntry("X-RateLimit-Remaining", "-1")
                    .containsEntry("RateLimit-Policy", "\"api\";q=5;w=5")
                    .doesNotContainKeys("RateLimit", "Retry-After");
            assertThat(r.getHeaders().get("Sluice-Degraded")).isIn("unavailable", "timeout");
            assertThat(counts.outcomes("api")).containsEntry("allowed", 1L).containsEntry("limiter_failed", 1L);
        }
    }

    @Test
    void aRouteWithoutArgumentsFailsAsItLoadsNamingThemAndTheOnesItHas() {
        SluiceRateLimiter limiter = new SluiceRateLimiter(memory, configurationService());
        assertThatThrownBy(() -> limiter.routeLoaded(
                        "api", List.of("redis-rate-limiter.burstCapacity", "redis-rate-limiter.replenishRate")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("route 'api': its RequestRateLimiter decides with Sluice but it has no"
                        + " sluice-rate-limiter.* arguments (it has redis-rate-limiter.burstCapacity,"
                        + " redis-rate-limiter.replenishRate, another rate limiter's: rename them"
                        + " sluice-rate-limiter.*): give sluice-rate-limiter.replenishRate and"
                        + " sluice-rate-limiter.burstCapacity (RedisRateLimiter's words) or"
                        + " sluice-rate-limiter.requests_per_unit with sluice-rate-limiter.unit or"
                        + " sluice-rate-limiter.window (Sluice's), on the route or in default-filters");
        assertThatThrownBy(() -> limiter.routeLoaded("bare", null))
                .hasMessageStartingWith("route 'bare': its RequestRateLimiter decides with Sluice but it has no"
                        + " sluice-rate-limiter.* arguments: give");

        DecisionCounts counts = new DecisionCounts();
        limiter.countingIn(counts);
        limiter.onApplicationEvent(args(
                "api", Map.of("sluice-rate-limiter.replenishRate", "1", "sluice-rate-limiter.burstCapacity", "2")));
        limiter.routeLoaded("api", null);
        assertThat(counts.routes()).hasSize(1);
        assertThat(counts.routes().get(0).limit())
                .isEqualTo(Limit.tokenBucket(2, dev.sluice.Rate.perSecond(1)).named("api"));
        assertThat(counts.routes().get(0).limit().name())
                .as("named as its RateLimit-Policy item")
                .isEqualTo("api");
    }

    @Test
    void anIdTooLongForAKeyIsHashedAndKeepsABucketOfItsOwn() {
        String longId = "x".repeat(Permit.MAX_KEY_LENGTH);
        String key = SluiceRateLimiter.key("api", longId);
        assertThat(key).startsWith("api.sha256:").hasSize("api.sha256:".length() + 64);
        assertThat(SluiceRateLimiter.key("api", longId + "y")).isNotEqualTo(key);
        assertThat(SluiceRateLimiter.key("api", "alice")).isEqualTo("api.alice");
    }

    /** A store whose blocking calls fail the test: the gateway must use only the async one. */
    private abstract static class RefusingBlockingCalls implements RateLimiter {
        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            throw new AssertionError("tryAcquire blocks: the gateway must call tryAcquireAsync");
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            throw new AssertionError("blocking multi-permit call");
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            throw new AssertionError("reserve");
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            throw new AssertionError("peek");
        }

        @Override
        public void reset(String key, Limit limit) {
            throw new AssertionError("reset");
        }

        @Override
        public void close() {}
    }
}
