package dev.sluice.failsafe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link StoreHealth}: the view a {@link FailSafeRateLimiter} gives of its store, the same through any wrapper
 * ({@link LeasedRateLimiter} here), and none where no policy stands in front of a store.
 */
class StoreHealthTest {
    private static final Limit WINDOW = Limit.slidingWindow(5, Duration.ofMinutes(1)); // not leased: every call
    private static final Limit BUCKET = Limit.tokenBucket(5, Rate.perMinute(5)); // leased
    private static final Duration PROBE = Duration.ofMillis(200);

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final FailSafeRateLimiterTest.FlakyStore store = new FailSafeRateLimiterTest.FlakyStore(ticker);

    @Test
    void leasesOverAFailSafeStoreReportItsHealthItsCauseItsPolicyAndItsCounts() {
        FailSafeRateLimiter failSafe = FailSafeRateLimiter.builder(store)
                .policy(FailurePolicy.FALLBACK_LOCAL)
                .probeInterval(PROBE)
                .ticker(ticker)
                .build();
        try (LeasedRateLimiter leased =
                LeasedRateLimiter.builder(failSafe).ticker(ticker).build()) {
            StoreHealth health = StoreHealth.of(leased).orElseThrow();
            assertThat(health.healthy()).isTrue();
            assertThat(health.cause()).isEqualTo(Degradation.NONE);
            assertThat(health.opened()).isTrue();
            assertThat(health.policy()).isEqualTo(FailurePolicy.FALLBACK_LOCAL);
            assertThat(leased.tryAcquire("k", BUCKET).degraded()).isFalse();

            store.failWith(Degradation.UNAVAILABLE);
            for (int i = 0; i < 8; i++) { // 3 open the circuit, 5 more are decided without the store
                assertThat(leased.tryAcquire("k", WINDOW).degradation()).isEqualTo(Degradation.UNAVAILABLE);
            }
            assertThat(health.healthy()).as("the circuit is open").isFalse();
            assertThat(health.cause()).isEqualTo(Degradation.UNAVAILABLE);
            assertThat(health.opened()).isTrue();
            assertThat(health.degradedCount(Degradation.UNAVAILABLE)).isEqualTo(8);
            assertThat(health.degradedCount(Degradation.TIMEOUT)).isZero();

            store.heal();
            ticker.advance(PROBE);
            assertThat(leased.peek("k", WINDOW).degraded())
                    .as("a peek is the probe that finds the store back")
                    .isFalse();
            assertThat(health.healthy()).isTrue();
            assertThat(health.cause()).isEqualTo(Degradation.NONE);
            assertThat(health.degradedCount(Degradation.UNAVAILABLE))
                    .as("counts are totals")
                    .isEqualTo(8);
        }
    }

    @Test
    void everyCauseIsCountedUnderItsOwnName() {
        try (FailSafeRateLimiter failSafe =
                FailSafeRateLimiter.builder(store).ticker(ticker).build()) {
            StoreHealth health = failSafe.storeHealth().orElseThrow();
            for (Degradation cause : Degradation.values()) {
                if (cause == Degradation.NONE) {
                    continue;
                }
                store.failWith(cause);
                failSafe.tryAcquire("k", WINDOW);
                store.heal();
                ticker.advance(Duration.ofMillis(200)); // a misconfiguration opened it at once: the next probe is due
                failSafe.tryAcquire("k", WINDOW); // closes the circuit again (any other single failure never opens it)
            }
            for (Degradation cause : Degradation.values()) {
                assertThat(health.degradedCount(cause)).as(cause.label()).isEqualTo(cause == Degradation.NONE ? 0 : 1);
            }
        }
    }

    @Test
    void aStoreStillBeingOpenedIsUnhealthyAndNotOpenedUntilItOpens() {
        AtomicBoolean up = new AtomicBoolean();
        ManualScheduler scheduler = ManualScheduler.on(ticker);
        try (FailSafeRateLimiter failSafe = FailSafeRateLimiter.builder(() -> {
                    if (!up.get()) {
                        throw new StoreException("connection refused", null, Degradation.UNAVAILABLE);
                    }
                    return store;
                })
                .policy(FailurePolicy.FAIL_CLOSED)
                .probeInterval(Duration.ofMillis(5))
                .scheduler(scheduler)
                .seams(Runnable::run, Circuit::logOffThePath)
                .build()) {
            StoreHealth health =
                    StoreHealth.of(LeasedRateLimiter.over(failSafe)).orElseThrow();
            assertThat(health.opened()).isFalse();
            assertThat(health.healthy()).isFalse();
            assertThat(health.cause()).isEqualTo(Degradation.UNAVAILABLE);
            assertThat(health.policy()).isEqualTo(FailurePolicy.FAIL_CLOSED);

            up.set(true);
            scheduler.advance(Duration.ofMillis(4));
            assertThat(health.opened()).as("not before the next attempt").isFalse();
            scheduler.advance(Duration.ofMillis(1));
            assertThat(health.opened()).isTrue();
            assertThat(health.healthy()).isTrue();
            assertThat(health.cause()).isEqualTo(Degradation.NONE);
        }
    }

    @Test
    void aLimiterWithNoPolicyInFrontOfItsStoreHasNoHealth() {
        try (RateLimiter memory = InMemoryRateLimiter.create()) {
            assertThat(StoreHealth.of(memory)).isEmpty();
            assertThat(StoreHealth.of(LeasedRateLimiter.over(memory)))
                    .as("leases over a bare store")
                    .isEmpty();
        }
    }
}
