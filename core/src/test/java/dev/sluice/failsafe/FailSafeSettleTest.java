package dev.sluice.failsafe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.Settlement;
import dev.sluice.failsafe.FailSafeRateLimiterTest.FlakyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A cost known afterwards behind {@link FailSafeRateLimiter}, on a store that fails on command: an estimate the store
 * cannot take is the policy's with nothing pending (pending locally with FALLBACK_LOCAL); a settle the store cannot
 * make answers NOT_PENDING, is counted and logged as the store's failure, and never throws it.
 */
class FailSafeSettleTest {
    private static final Limit THREE = Limit.tokenBucket(3, Rate.perHour(3));
    private static final Duration WITHIN = Duration.ofMinutes(1);
    private static final Duration PROBE = Duration.ofMillis(200);

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final FlakyStore store = new FlakyStore(ticker);
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private FailSafeRateLimiter limiter(FailurePolicy policy) {
        return FailSafeRateLimiter.builder(store)
                .policy(policy)
                .probeInterval(PROBE)
                .ticker(ticker)
                .seams(Runnable::run, (level, line) -> lines.add(level + " " + line))
                .build();
    }

    @Test
    void anEstimateTheStoreCannotTakeIsThePolicysWithNothingPending() {
        try (FailSafeRateLimiter open = limiter(FailurePolicy.FAIL_OPEN)) {
            store.failWith(Degradation.TIMEOUT);
            assertThat(open.tryAcquireEstimate("k", THREE, 2, "r", WITHIN))
                    .isEqualTo(new Decision(true, 3, 1, 0, 0, Degradation.TIMEOUT));
            assertThat(open.tryAcquireEstimateAsync("k", THREE, 2, "r2", WITHIN).join())
                    .isEqualTo(new Decision(true, 3, 1, 0, 0, Degradation.TIMEOUT));
            assertThat(open.degradedCount(Degradation.TIMEOUT)).isEqualTo(2);
            store.heal();
            assertThat(open.settle("k", THREE, "r", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(open.peek("k", THREE, 3).allowed())
                    .as("the store took nothing")
                    .isTrue();
        }
        try (FailSafeRateLimiter closed = limiter(FailurePolicy.FAIL_CLOSED)) {
            store.failWith(Degradation.UNAVAILABLE);
            assertThat(closed.tryAcquireEstimate("k", THREE, 1, "r", WITHIN))
                    .isEqualTo(new Decision(false, 3, 0, PROBE.toNanos(), PROBE.toNanos(), Degradation.UNAVAILABLE));
        }
    }

    @Test
    void aSettleTheStoreCannotMakeIsNotPendingCountedAndLoggedAndMayBeRetried() {
        try (FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED)) {
            assertThat(limiter.tryAcquireEstimate("k", THREE, 3, "r", WITHIN).allowed())
                    .isTrue();
            store.failWith(Degradation.UNAVAILABLE);
            assertThat(limiter.settle("k", THREE, "r", 1)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(limiter.settleAsync("k", THREE, "r", 1).join()).isEqualTo(Settlement.NOT_PENDING);
            assertThat(limiter.settle("k", THREE, "r", 1)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(limiter.degradedCount(Degradation.UNAVAILABLE)).isEqualTo(3);
            assertThat(limiter.storeHealthy())
                    .as("three failures open the circuit")
                    .isFalse();
            assertThat(lines).anyMatch(l -> l.contains("store failing (unavailable)"));
            // the circuit is open: not even tried, and still no exception
            assertThat(limiter.settle("k", THREE, "r", 1)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(limiter.degradedCount(Degradation.UNAVAILABLE)).isEqualTo(4);

            store.heal();
            ticker.advance(PROBE);
            // the reservation is still pending in the store: a retried settle applies it
            assertThat(limiter.settle("k", THREE, "r", 1).settled()).isTrue();
            assertThat(limiter.storeHealthy()).isTrue();
        }
    }

    @Test
    void theCallersMistakesPropagateAndAreNotCounted() {
        try (FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN)) {
            limiter.tryAcquireEstimate("k", THREE, 1, "r", WITHIN);
            assertThatThrownBy(() -> limiter.tryAcquireEstimate("k", THREE, 1, "r", WITHIN))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("already pending");
            assertThatThrownBy(() -> limiter.settle("k", THREE, "r", 4))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("actual cost 4");
            for (Degradation cause : Degradation.values()) {
                assertThat(limiter.degradedCount(cause)).isZero();
            }
        }
    }

    @Test
    void fallbackLocalSettlesLocallyWhatItReservedThereEvenOnceTheStoreIsBack() {
        try (FailSafeRateLimiter limiter = limiter(FailurePolicy.FALLBACK_LOCAL)) {
            store.failWith(Degradation.TIMEOUT);
            assertThat(limiter.tryAcquireEstimate("k", THREE, 3, "local", WITHIN))
                    .isEqualTo(new Decision(true, 3, 0, 0, Duration.ofHours(1).toNanos(), Degradation.TIMEOUT));
            assertThat(limiter.tryAcquireEstimateAsync("k", THREE, 1, "denied", WITHIN)
                            .join()
                            .allowed())
                    .as("the local bucket is empty")
                    .isFalse();
            // the store fails the settle too: settled locally
            assertThat(limiter.settleAsync("k", THREE, "local", 2).join()).isEqualTo(new Settlement(true, 3, -1, 1));
            assertThat(limiter.tryAcquireEstimate("k", THREE, 1, "again", WITHIN)
                            .allowed())
                    .isTrue();
            store.heal();
            ticker.advance(PROBE);
            // the store has nothing pending under that id: the local limiter settles it
            assertThat(limiter.settle("k", THREE, "again", 0)).isEqualTo(new Settlement(true, 1, -1, 1));
            assertThat(limiter.settle("k", THREE, "again", 0)).isEqualTo(Settlement.NOT_PENDING);
            // and the store's own reservations settle in the store
            assertThat(limiter.tryAcquireEstimate("k", THREE, 2, "stored", WITHIN))
                    .isEqualTo(
                            new Decision(true, 3, 1, 0, Duration.ofMinutes(40).toNanos()));
            assertThat(limiter.settle("k", THREE, "stored", 3)).isEqualTo(new Settlement(true, 2, 1, 0));
        }
    }
}
