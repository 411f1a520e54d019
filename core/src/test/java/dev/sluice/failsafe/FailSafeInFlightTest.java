package dev.sluice.failsafe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.ManualTicker;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Work in flight through {@link FailSafeRateLimiter}: the store's slots, or the policy's when it fails. */
class FailSafeInFlightTest {
    private static final Duration PROBE = Duration.ofMillis(200);
    private static final Duration LEASE = Duration.ofSeconds(30);

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final FailSafeRateLimiterTest.FlakyStore store = new FailSafeRateLimiterTest.FlakyStore(ticker);

    private InFlightLimiter slots(FailurePolicy policy) {
        return limiter(policy).inFlight();
    }

    private FailSafeRateLimiter limiter(FailurePolicy policy) {
        return FailSafeRateLimiter.builder(store)
                .policy(policy)
                .probeInterval(PROBE)
                .ticker(ticker)
                .build();
    }

    @Test
    void aHealthyStoresSlotsAnswerAndNothingIsDegraded() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED);
        InFlightLimiter s = limiter.inFlight();
        assertThat(s.tryAcquire("k", 1, "a", LEASE)).isEqualTo(new Decision(true, 1, 0, 0, LEASE.toNanos()));
        assertThat(s.tryAcquire("k", 1, "b", LEASE).degraded()).isFalse();
        assertThat(s.renew("k", "a", LEASE)).isTrue();
        assertThat(s.release("k", "a")).isTrue();
        assertThat(store.calls.get()).isEqualTo(4);
        assertThat(limiter.storeHealthy()).isTrue();
    }

    @Test
    void failOpenAllowsWithAFreshKeysNumbersAndLetsWorkGoOn() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.TIMEOUT);
        InFlightLimiter s = limiter.inFlight();
        assertThat(s.tryAcquire("k", 4, "a", LEASE))
                .isEqualTo(new Decision(true, 4, 3, 0, LEASE.toNanos(), Degradation.TIMEOUT));
        assertThat(s.renew("k", "a", LEASE)).as("open: the work may go on").isTrue();
        assertThat(s.release("k", "a")).as("nothing released at the store").isFalse();
        assertThat(limiter.degradedCount(Degradation.TIMEOUT))
                .as("the acquire, the renewal and the release: each answered by the policy, as a settle is")
                .isEqualTo(3);
    }

    @Test
    void failClosedDeniesUntilTheNextProbeAndStopsTheWork() throws Exception {
        InFlightLimiter s = slots(FailurePolicy.FAIL_CLOSED);
        store.failWith(Degradation.UNAVAILABLE);
        assertThat(s.tryAcquire("k", 4, "a", LEASE))
                .isEqualTo(new Decision(false, 4, 0, PROBE.toNanos(), PROBE.toNanos(), Degradation.UNAVAILABLE));
        assertThat(s.tryAcquireAsync("k", 4, "a", LEASE).get().denied()).isTrue();
        assertThat(s.renew("k", "a", LEASE))
                .as("closed: the holder should stop")
                .isFalse();
        assertThat(s.renewAsync("k", "a", LEASE).get()).isFalse();
    }

    @Test
    void fallbackLocalHoldsSlotsInMemoryWhileTheStoreIsDownAndTheStoreAgainOnceItIsBack() throws Exception {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FALLBACK_LOCAL);
        InFlightLimiter s = limiter.inFlight();
        assertThat(s.tryAcquire("k", 2, "at-the-store", LEASE).allowed()).isTrue();
        store.failWith(Degradation.TIMEOUT);
        assertThat(s.tryAcquire("k", 2, "a", LEASE))
                .isEqualTo(new Decision(true, 2, 1, 0, LEASE.toNanos(), Degradation.TIMEOUT));
        assertThat(s.tryAcquireAsync("k", 2, "b", LEASE).get().remaining()).isZero();
        Decision third = s.tryAcquire("k", 2, "c", LEASE);
        assertThat(third.denied()).as("the local slots' maximum").isTrue();
        assertThat(third.degradation()).isEqualTo(Degradation.TIMEOUT);
        assertThat(s.renew("k", "a", LEASE)).isTrue();
        assertThat(s.releaseAsync("k", "a").get()).isTrue();
        assertThat(s.release("k", "a")).isFalse();
        ticker.advance(PROBE);
        store.heal();
        assertThat(s.tryAcquire("k", 2, "c", LEASE))
                .as("the store decides again, with its own slots: 'at-the-store' holds one")
                .isEqualTo(new Decision(true, 2, 0, 0, LEASE.toNanos()));
        assertThat(limiter.storeHealthy()).isTrue();
    }

    @Test
    void threeFailingSlotCallsOpenTheCircuitForTheDecisionsToo() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED);
        InFlightLimiter s = limiter.inFlight();
        store.failWith(Degradation.UNAVAILABLE);
        for (int i = 0; i < 3; i++) {
            assertThat(s.release("k", "a")).isFalse();
        }
        assertThat(limiter.storeHealthy()).isFalse();
        int calls = store.calls.get();
        assertThat(s.tryAcquire("k", 1, "a", LEASE).degradation()).isEqualTo(Degradation.UNAVAILABLE);
        assertThat(store.calls.get())
                .as("the open circuit leaves the store alone")
                .isEqualTo(calls);
    }

    @Test
    void badInputIsRejectedBeforeTheStoreOrThePolicy() {
        InFlightLimiter s = slots(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.TIMEOUT);
        assertThatThrownBy(() -> s.tryAcquire("k", 0, "a", LEASE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxInFlight 0");
        assertThatThrownBy(() -> s.renewAsync("k", "a b", LEASE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> s.releaseAsync("", "a")).isInstanceOf(IllegalArgumentException.class);
        assertThat(store.calls.get()).isZero();
    }
}
