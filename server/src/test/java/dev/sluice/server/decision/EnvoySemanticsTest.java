package dev.sluice.server.decision;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.ManualTicker;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.config.Semantics;
import dev.sluice.server.decision.CheckResult.Code;
import dev.sluice.server.decision.CheckResult.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Envoy APIs' two semantics, side by side on the same traffic, through {@link DecisionService#checkEnvoy}:
 * envoyproxy/ratelimit's counting (every hit counted, denied ones too, each descriptor on its own) and Sluice's
 * strict one (a denial consumes nothing, descriptors all-or-nothing). Time is a {@link ManualTicker} at a
 * multiple of every window.
 */
class EnvoySemanticsTest {
    static final long T0 = 1_767_225_600L * 1_000_000_000L;
    static final String RULES = """
            domain: api
            descriptors:
              - key: user
                rate_limit: {unit: minute, requests_per_unit: 5}
              - key: tenant
                rate_limit: {unit: hour, requests_per_unit: 20}
              - key: shadow
                shadow_mode: true
                rate_limit: {unit: minute, requests_per_unit: 1}
              - key: banned
                rate_limit: {unit: second, requests_per_unit: 0}
              - key: tb
                rate_limit: {algorithm: token_bucket, unit: second, requests_per_unit: 1, burst: 3}
            """;

    ManualTicker clock;
    DecisionService service;

    @BeforeEach
    void start() throws Exception {
        clock = ManualTicker.atEpochNanos(T0);
        service = new DecisionService(
                InMemoryRateLimiter.builder().ticker(clock).build(),
                "memory",
                RuleSet.parse("test", RULES),
                Duration.ofMillis(250).toNanos(),
                64,
                new ServerMetrics());
    }

    static CheckRequest.Descriptor d(String key, String value, long hits) {
        return new CheckRequest.Descriptor(List.of(new Entry(key, value)), hits, null);
    }

    CheckResult envoy(CheckRequest.Descriptor... ds) {
        return service.checkEnvoy(new CheckRequest("api", List.of(ds)), Semantics.ENVOY)
                .join();
    }

    CheckResult strict(CheckRequest.Descriptor... ds) {
        return service.checkEnvoy(new CheckRequest("api", List.of(ds)), Semantics.STRICT)
                .join();
    }

    @Test
    void envoyCountsDeniedHitsSoTheWindowStaysOver() {
        assertThat(envoy(d("user", "a", 3)).statuses().get(0).decision().remaining())
                .isEqualTo(2);
        CheckResult big = envoy(d("user", "a", 3));
        assertThat(big.allowed()).isFalse();
        assertThat(big.statuses().get(0).decision().remaining())
                .as("over: 0, as envoy")
                .isZero();
        // envoy's counter is now 6 > 5: even 1 more hit, or a check of 0, is over until the minute ends
        assertThat(envoy(d("user", "a", 1)).allowed()).isFalse();
        assertThat(envoy(d("user", "a", 0)).allowed()).isFalse();
        clock.advance(Duration.ofMinutes(1));
        assertThat(envoy(d("user", "a", 5)).allowed()).isTrue();
    }

    @Test
    void strictConsumesNothingOnADenial() {
        assertThat(strict(d("user", "a", 3)).allowed()).isTrue();
        assertThat(strict(d("user", "a", 3)).allowed()).isFalse();
        CheckResult two = strict(d("user", "a", 2));
        assertThat(two.allowed()).as("the denied 3 took nothing: 2 still fit").isTrue();
        assertThat(two.statuses().get(0).decision().remaining()).isZero();
    }

    @Test
    void checkOnlyIsOkAtExactlyTheLimitAndOverOnlyBeyondIt() {
        envoy(d("user", "b", 5));
        CheckResult atLimit = envoy(d("user", "b", 0));
        assertThat(atLimit.allowed()).as("envoy compares count + 0 > limit").isTrue();
        assertThat(atLimit.statuses().get(0).outcome()).isEqualTo(Outcome.CHECKED);
        assertThat(atLimit.statuses().get(0).decision().remaining()).isZero();
        assertThat(envoy(d("user", "b", 1)).allowed()).isFalse();
        assertThat(envoy(d("user", "b", 0)).allowed())
                .as("a counted denial put it beyond")
                .isFalse();
    }

    @Test
    void envoyCountsEveryDescriptorOnItsOwnStrictIsAllOrNothing() {
        envoy(d("user", "e", 5));
        CheckResult r = envoy(d("tenant", "t1", 1), d("user", "e", 1));
        assertThat(r.allowed()).isFalse();
        assertThat(r.statuses().get(0).code()).isEqualTo(Code.OK);
        assertThat(r.statuses().get(0).decision().remaining())
                .as("the tenant was counted anyway")
                .isEqualTo(19);
        assertThat(r.statuses().get(1).code()).isEqualTo(Code.OVER_LIMIT);

        strict(d("user", "s", 5));
        CheckResult s = strict(d("tenant", "t2", 1), d("user", "s", 1));
        assertThat(s.allowed()).isFalse();
        assertThat(strict(d("tenant", "t2", 20)).allowed())
                .as("all or nothing: the tenant kept its 20")
                .isTrue();
    }

    @Test
    void hitsAboveTheLimitAreOverNotAnError() {
        CheckResult e = envoy(d("user", "h", 6));
        assertThat(e.allowed()).isFalse();
        assertThat(envoy(d("user", "h", 0)).allowed()).as("envoy counted all 6").isFalse();
        CheckResult s = strict(d("user", "i", 6));
        assertThat(s.allowed()).isFalse();
        assertThat(s.statuses().get(0).outcome()).isEqualTo(Outcome.OVER_LIMIT);
        assertThat(strict(d("user", "i", 5)).allowed())
                .as("strict: nothing was taken")
                .isTrue();
    }

    @Test
    void shadowModeCountsButNeverDeniesAndBlockedRulesDenyEveryHit() {
        assertThat(envoy(d("shadow", "x", 1)).statuses().get(0).outcome()).isEqualTo(Outcome.OK);
        CheckResult over = envoy(d("shadow", "x", 1));
        assertThat(over.allowed()).isTrue();
        assertThat(over.statuses().get(0).code()).isEqualTo(Code.OK);
        assertThat(over.statuses().get(0).outcome()).isEqualTo(Outcome.SHADOW_OVER_LIMIT);
        assertThat(over.statuses().get(0).decision().remaining()).isZero();

        CheckResult banned = envoy(d("banned", "x", 1));
        assertThat(banned.allowed()).isFalse();
        assertThat(banned.statuses().get(0).outcome()).isEqualTo(Outcome.BLOCKED);
        assertThat(envoy(d("banned", "x", 0)).allowed())
                .as("0 > 0 is false: a check passes")
                .isTrue();
    }

    @Test
    void otherAlgorithmsCountADenialByDrainingWhatIsLeft() {
        assertThat(envoy(d("tb", "x", 2)).allowed()).isTrue();
        assertThat(envoy(d("tb", "x", 2)).allowed()).as("1 left, 2 asked").isFalse();
        assertThat(envoy(d("tb", "x", 1)).allowed())
                .as("the denial drained the last token")
                .isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(envoy(d("tb", "x", 1)).allowed()).isTrue();
    }

    @Test
    void unknownDomainLimitsNothingNotEvenACallersLimit() {
        CheckRequest.Descriptor own = new CheckRequest.Descriptor(
                List.of(new Entry("k", "v")), 1, dev.sluice.Limit.fixedWindow(1, Duration.ofMinutes(1)), "minute");
        CheckResult r = service.checkEnvoy(new CheckRequest("nope", List.of(d("a", "b", 1), own)), Semantics.ENVOY)
                .join();
        assertThat(r.allowed()).isTrue();
        assertThat(r.statuses()).allMatch(s -> s.outcome() == Outcome.NO_RULE);
    }

    @Test
    void aCallersLimitCountsOnTheRulesCounterAsInEnvoy() {
        envoy(d("user", "o", 3));
        CheckRequest.Descriptor own = new CheckRequest.Descriptor(
                List.of(new Entry("user", "o")), 1, dev.sluice.Limit.fixedWindow(10, Duration.ofMinutes(1)), "minute");
        CheckResult r = service.checkEnvoy(new CheckRequest("api", List.of(own)), Semantics.ENVOY)
                .join();
        assertThat(r.statuses().get(0).decision().remaining())
                .as("the same entries and window: count 4 of 10")
                .isEqualTo(6);
        assertThat(envoy(d("user", "o", 1)).statuses().get(0).decision().remaining())
                .as("count 5 of 5")
                .isZero();
    }

    @Test
    void aCallersLimitOfZeroBlocksAndKeepsItsUnit() {
        CheckRequest.Descriptor zero = new CheckRequest.Descriptor(List.of(new Entry("k", "v")), 1, null, "hour");
        CheckResult r = service.checkEnvoy(new CheckRequest("api", List.of(zero)), Semantics.ENVOY)
                .join();
        assertThat(r.allowed()).isFalse();
        assertThat(r.statuses().get(0).rule().unit()).isEqualTo("hour");
        assertThat(r.statuses().get(0).rule().requestsPerUnit()).isZero();
    }

    /**
     * With the store down, {@code fallback_local} limits envoy's counting as the store would (its counters in
     * memory), {@code fail_closed} denies, {@code fail_open} admits: each answer marked degraded.
     */
    @Test
    void failurePoliciesKeepEnvoysCountingMeaningful() throws Exception {
        for (dev.sluice.failsafe.FailurePolicy policy : dev.sluice.failsafe.FailurePolicy.values()) {
            DecisionService down = new DecisionService(
                    dev.sluice.failsafe.FailSafeRateLimiter.builder(new dev.sluice.server.DownStore())
                            .policy(policy)
                            .ticker(clock)
                            .build(),
                    "down",
                    RuleSet.parse("test", RULES),
                    Duration.ofMillis(250).toNanos(),
                    64,
                    new ServerMetrics());
            int ok = 0;
            for (int i = 0; i < 8; i++) {
                CheckResult r = down.checkEnvoy(new CheckRequest("api", List.of(d("user", "f", 1))), Semantics.ENVOY)
                        .join();
                assertThat(r.degradation()).as(policy.name()).isNotEqualTo(dev.sluice.Degradation.NONE);
                ok += r.allowed() ? 1 : 0;
            }
            assertThat(ok)
                    .as(policy.name())
                    .isEqualTo(
                            switch (policy) {
                                case FAIL_OPEN -> 8;
                                case FAIL_CLOSED -> 0;
                                case FALLBACK_LOCAL -> 5;
                            });
        }
    }

    /** Envoy's counting is exact too: 8 threads hammering one key never get more than the limit answered OK. */
    @Test
    void concurrentCountingNeverAdmitsMoreThanTheLimit() throws Exception {
        int threads = 8;
        int perThread = 200;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicInteger ok = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            fs.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < perThread; i++) {
                    CheckResult r = envoy(d("tenant", "hot", 1 + (id + i) % 3));
                    if (r.allowed()) {
                        ok.addAndGet((int) r.statuses().get(0).hits());
                    }
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : fs) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(ok.get())
                .as("hits answered OK in one hour window")
                .isLessThanOrEqualTo(20)
                .isPositive();
        Decision after = service.checkEnvoy(new CheckRequest("api", List.of(d("tenant", "hot", 0))), Semantics.ENVOY)
                .join()
                .statuses()
                .get(0)
                .decision();
        assertThat(after.denied()).as("the window went over and stays over").isTrue();
    }
}
