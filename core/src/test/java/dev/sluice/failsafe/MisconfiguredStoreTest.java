package dev.sluice.failsafe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.store.ReconnectBackoff;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A misconfiguration is not an outage: the first attempt that finds the store misconfigured fails {@code build()}
 * with the store's own exception and is not retried; started despite it, or met after a good start, it is degraded
 * with its own cause and its retries back off from 1 s to 30 s. The opener waits on a {@link ManualScheduler} and its
 * attempts run on the test's thread, so the test steps it one attempt at a time: nothing here sleeps or waits.
 */
class MisconfiguredStoreTest {

    private static final Limit LIMIT = Limit.tokenBucket(3, Rate.perMinute(3));
    private static final Duration PROBE = Duration.ofMillis(200);

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final FailSafeRateLimiterTest.FlakyStore store = new FailSafeRateLimiterTest.FlakyStore(ticker);
    private final ManualScheduler scheduler = ManualScheduler.on(ticker);
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private FailSafeRateLimiter.Builder builder(java.util.function.Supplier<RateLimiter> supplier) {
        return FailSafeRateLimiter.builder(supplier)
                .policy(FailurePolicy.FAIL_CLOSED)
                .probeInterval(PROBE)
                .scheduler(scheduler)
                .seams(Runnable::run, (level, line) -> lines.add(level + " " + line));
    }

    /** Moves time to the next attempt, checking that it comes {@code after} the last one and not a nanosecond sooner. */
    private void nextAttemptComesAfter(Duration after, AtomicInteger attempts) {
        int before = attempts.get();
        scheduler.advance(after.minusNanos(1));
        assertThat(attempts.get()).as("no attempt before " + after).isEqualTo(before);
        scheduler.advance(Duration.ofNanos(1));
        assertThat(attempts.get()).as("an attempt " + after + " after the last").isEqualTo(before + 1);
    }

    private static StoreException refused() {
        return new StoreException(
                "Redis at redis://127.0.0.1:6379 refused the password (WRONGPASS): fix it in the" + " URI",
                null,
                Degradation.MISCONFIGURED);
    }

    @Test
    void aMisconfiguredFirstAttemptFailsBuildWithTheStoresOwnExceptionAndIsNotRetried() {
        AtomicInteger attempts = new AtomicInteger();
        StoreException refused = refused();
        assertThatThrownBy(() -> builder(() -> {
                            attempts.incrementAndGet();
                            throw refused;
                        })
                        .build())
                .isSameAs(refused);
        assertThat(attempts.get()).isEqualTo(1);
        assertThat(scheduler.pending()).as("no retry was scheduled").isZero();
        assertThat(lines).as("the exception says it all; nothing was logged").isEmpty();
    }

    @Test
    void aSupplierRefusingItsSettingsFailsBuildToo() {
        IllegalArgumentException bad = new IllegalArgumentException("redisUri \"nonsense\" has no scheme");
        assertThatThrownBy(() -> builder(() -> {
                            throw bad;
                        })
                        .build())
                .isSameAs(bad);
        assertThat(scheduler.pending()).isZero();
    }

    @Test
    void startedDespiteAMisconfigurationDecisionsSayItAndRetriesBackOffToThirtySeconds() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        AtomicReference<RateLimiter> opens = new AtomicReference<>();
        FailSafeRateLimiter limiter = builder(() -> {
                    attempts.incrementAndGet();
                    RateLimiter s = opens.get();
                    if (s == null) {
                        throw refused();
                    }
                    return s;
                })
                .startDespiteMisconfiguration(true)
                .build();
        Decision d = limiter.tryAcquire("k", LIMIT);
        assertThat(d.degradation()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(d.allowed()).as("fail closed").isFalse();
        assertThat(limiter.degradedCount(Degradation.MISCONFIGURED)).isEqualTo(1);
        long[] expected = {1, 2, 4, 8, 16, 30, 30, 30};
        for (int i = 0; i < expected.length - 1; i++) {
            assertThat(attempts.get()).isEqualTo(i + 1);
            nextAttemptComesAfter(Duration.ofSeconds(expected[i]), attempts);
        }
        opens.set(store); // the operator fixed the password
        nextAttemptComesAfter(Duration.ofSeconds(expected[expected.length - 1]), attempts);
        assertThat(limiter.storeHealthy()).isTrue();
        assertThat(attempts.get()).isEqualTo(expected.length + 1);
        assertThat(scheduler.pending()).as("no attempt once the store is open").isZero();
        assertThat(limiter.tryAcquire("k", LIMIT).degraded()).isFalse();
        // 2 min 1 s of refusals on the scheduler's clock: the first line, a reminder every 30 s, the line it opened
        assertThat(lines).hasSize(5);
        assertThat(lines.get(0))
                .startsWith("WARNING store failing (misconfigured)")
                .contains("WRONGPASS")
                .contains("trying again in 1 s, backing off to 30 s");
        assertThat(lines.subList(1, 4))
                .extracting(line -> line.substring(0, line.indexOf(',')))
                .containsExactly(
                        "WARNING store still failing (misconfigured) for 31 s",
                        "WARNING store still failing (misconfigured) for 1 min 1 s",
                        "WARNING store still failing (misconfigured) for 1 min 31 s");
        assertThat(lines.get(4))
                .startsWith("INFO store opened after 2 min 1 s")
                .contains("was degraded: misconfigured");
        limiter.close();
    }

    @Test
    void anUnavailableStoreAtStartIsRetriedEveryProbeIntervalAndAMisconfigurationThenBacksOff() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        FailSafeRateLimiter limiter = builder(() -> {
                    if (attempts.incrementAndGet() <= 3) {
                        throw new StoreException("connection refused", null, Degradation.UNAVAILABLE);
                    }
                    throw refused(); // it came back with another password
                })
                .build();
        assertThat(limiter.tryAcquire("k", LIMIT).degradation()).isEqualTo(Degradation.UNAVAILABLE);
        for (int i = 0; i < 3; i++) {
            nextAttemptComesAfter(PROBE, attempts);
        }
        assertThat(attempts.get()).as("three unavailable, then refused").isEqualTo(4);
        assertThat(limiter.tryAcquire("k", LIMIT).degradation()).isEqualTo(Degradation.MISCONFIGURED);
        nextAttemptComesAfter(ReconnectBackoff.FIRST, attempts);
        nextAttemptComesAfter(ReconnectBackoff.FIRST.multipliedBy(2), attempts);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0))
                .startsWith("WARNING store failing (unavailable)")
                .contains("every 200 ms");
        assertThat(lines.get(1)).startsWith("WARNING store now failing (misconfigured, was unavailable)");
        limiter.close();
        assertThat(scheduler.pending()).as("close() cancelled the next attempt").isZero();
    }

    @Test
    void aMisconfigurationAfterAGoodStartOpensTheCircuitAtOnce() {
        FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(store)
                .policy(FailurePolicy.FAIL_OPEN)
                .probeInterval(PROBE)
                .ticker(ticker)
                .seams(null, (level, line) -> lines.add(level + " " + line))
                .build();
        assertThat(limiter.tryAcquire("k", LIMIT).degraded()).isFalse();
        store.failWith(Degradation.MISCONFIGURED); // say, a privilege revoked
        assertThat(limiter.tryAcquire("k", LIMIT).degradation()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(limiter.storeHealthy())
                .as("no second try will differ: open after one")
                .isFalse();
        int calls = store.calls.get();
        Decision meanwhile = limiter.tryAcquire("k", LIMIT);
        assertThat(meanwhile.degradation()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(store.calls.get())
                .as("the store is left alone until the next probe")
                .isEqualTo(calls);
        store.heal();
        ticker.advance(PROBE);
        assertThat(limiter.tryAcquire("k", LIMIT).degraded()).isFalse();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("WARNING store failing (misconfigured)");
        assertThat(lines.get(1)).startsWith("INFO store answers again after 200 ms (was degraded: misconfigured)");
    }
}
