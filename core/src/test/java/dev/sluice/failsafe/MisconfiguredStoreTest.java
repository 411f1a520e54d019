package dev.sluice.failsafe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.store.ReconnectBackoff;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A misconfiguration is not an outage: the first attempt that finds the store misconfigured fails {@code build()}
 * with the store's own exception and is not retried; started despite it, or met after a good start, it is degraded
 * with its own cause and its retries back off from 1 s to 30 s. The opener's pauses go through a seam the test
 * steps, one attempt at a time: nothing here sleeps to assert.
 */
class MisconfiguredStoreTest {

    private static final Limit LIMIT = Limit.tokenBucket(3, Rate.perMinute(3));
    private static final Duration PROBE = Duration.ofMillis(200);

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final FailSafeRateLimiterTest.FlakyStore store = new FailSafeRateLimiterTest.FlakyStore(ticker);
    private final SteppedPause pause = new SteppedPause();
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private FailSafeRateLimiter.Builder builder(java.util.function.Supplier<RateLimiter> supplier) {
        return FailSafeRateLimiter.builder(supplier)
                .policy(FailurePolicy.FAIL_CLOSED)
                .probeInterval(PROBE)
                .ticker(ticker)
                .seams(pause, (level, line) -> lines.add(level + " " + line));
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
        assertThat(pause.requested).as("no retry was scheduled").isEmpty();
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
        assertThat(pause.requested).isEmpty();
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
        for (int i = 0; i < expected.length; i++) {
            assertThat(pause.next())
                    .as("wait after refusal " + (i + 1))
                    .isEqualTo(Duration.ofSeconds(expected[i]).toNanos());
            assertThat(attempts.get()).isEqualTo(i + 1);
            if (i < expected.length - 1) {
                pause.release();
            }
        }
        opens.set(store); // the operator fixed the password
        pause.release();
        awaitHealthy(limiter);
        assertThat(attempts.get()).isEqualTo(expected.length + 1);
        assertThat(limiter.tryAcquire("k", LIMIT).degraded()).isFalse();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0))
                .startsWith("WARNING store failing (misconfigured)")
                .contains("WRONGPASS")
                .contains("trying again in 1 s, backing off to 30 s");
        assertThat(lines.get(1)).startsWith("INFO store opened after").contains("was degraded: misconfigured");
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
            assertThat(pause.next()).isEqualTo(PROBE.toNanos());
            pause.release();
        }
        assertThat(pause.next()).isEqualTo(ReconnectBackoff.FIRST.toNanos());
        assertThat(limiter.tryAcquire("k", LIMIT).degradation()).isEqualTo(Degradation.MISCONFIGURED);
        pause.release();
        assertThat(pause.next()).isEqualTo(2 * ReconnectBackoff.FIRST.toNanos());
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0))
                .startsWith("WARNING store failing (unavailable)")
                .contains("every 200 ms");
        assertThat(lines.get(1)).startsWith("WARNING store now failing (misconfigured, was unavailable)");
        limiter.close();
        pause.release();
    }

    @Test
    void aMisconfigurationAfterAGoodStartOpensTheCircuitAtOnce() {
        FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(store)
                .policy(FailurePolicy.FAIL_OPEN)
                .probeInterval(PROBE)
                .ticker(ticker)
                .seams(StoreOpener.Pause.SLEEP, (level, line) -> lines.add(level + " " + line))
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

    private static void awaitHealthy(FailSafeRateLimiter limiter) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!limiter.storeHealthy() && System.nanoTime() < deadline) {
            Thread.sleep(1); // the opener's thread installs the store: this waits for it, asserts nothing on time
        }
        assertThat(limiter.storeHealthy()).isTrue();
    }

    /** The opener's pauses, one at a time: each is recorded and returns when the test releases it. */
    static final class SteppedPause implements StoreOpener.Pause {
        final BlockingQueue<Long> requested = new LinkedBlockingQueue<>();
        private final Semaphore go = new Semaphore(0);

        @Override
        public void pause(long nanos) throws InterruptedException {
            requested.add(nanos);
            go.acquire();
        }

        /** The next pause the opener asked for; 10 s is the hang guard. */
        long next() throws InterruptedException {
            Long n = requested.poll(10, TimeUnit.SECONDS);
            assertThat(n).as("the opener paused").isNotNull();
            return n;
        }

        void release() {
            go.release();
        }
    }
}
