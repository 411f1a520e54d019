package dev.sluice.failsafe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The policy logic of {@link FailSafeRateLimiter} on a store that fails on command. Real stores failing for
 * real (killed, paused, unreachable) are tested in the Redis and PostgreSQL modules.
 */
class FailSafeRateLimiterTest {

    private static final Limit THREE_PER_MINUTE = Limit.tokenBucket(3, Rate.perMinute(3));
    private static final Duration PROBE = Duration.ofMillis(200);

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final FlakyStore store = new FlakyStore(ticker);

    private FailSafeRateLimiter limiter(FailurePolicy policy) {
        return FailSafeRateLimiter.builder(store)
                .policy(policy)
                .probeInterval(PROBE)
                .ticker(ticker)
                .build();
    }

    @Test
    void aHealthyStoreDecidesAndNothingIsDegraded() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).allowed()).isTrue();
        }
        Decision fourth = limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(fourth.allowed()).isFalse();
        assertThat(fourth.degraded()).isFalse();
        assertThat(fourth.retryAfter()).isEqualTo(Duration.ofSeconds(20));
        assertThat(limiter.storeHealthy()).isTrue();
        assertThat(store.calls.get()).isEqualTo(4);
    }

    @Test
    void failOpenAllowsWithAFreshKeysNumbersMarkedWithTheCause() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.TIMEOUT);
        Decision d = limiter.tryAcquire("k", THREE_PER_MINUTE, 2);
        assertThat(d).isEqualTo(new Decision(true, 3, 1, 0, 0, Degradation.TIMEOUT));
        assertThat(limiter.degradedCount(Degradation.TIMEOUT)).isEqualTo(1);
        assertThat(limiter.degradedCount(Degradation.UNAVAILABLE)).isZero();
    }

    @Test
    void failClosedDeniesUntilTheNextProbe() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED);
        store.failWith(Degradation.UNAVAILABLE);
        Decision d = limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(d).isEqualTo(new Decision(false, 3, 0, PROBE.toNanos(), PROBE.toNanos(), Degradation.UNAVAILABLE));
    }

    @Test
    void fallbackLocalEnforcesTheSameLimitInMemory() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FALLBACK_LOCAL);
        store.failWith(Degradation.TIMEOUT);
        int allowed = 0;
        for (int i = 0; i < 10; i++) {
            Decision d = limiter.tryAcquire("k", THREE_PER_MINUTE);
            assertThat(d.degradation()).isEqualTo(Degradation.TIMEOUT);
            allowed += d.allowed() ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(3);
        Decision denied = limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(denied.retryAfter()).isEqualTo(Duration.ofSeconds(20));
        assertThat(limiter.degradedCount(Degradation.TIMEOUT)).isEqualTo(11);
    }

    @Test
    void threeUnhealthyFailuresOpenTheCircuitAndTheStoreIsLeftAlone() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.TIMEOUT);
        for (int i = 0; i < 3; i++) {
            limiter.tryAcquire("k", THREE_PER_MINUTE);
        }
        assertThat(limiter.storeHealthy()).isFalse();
        for (int i = 0; i < 100; i++) {
            assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).degradation()).isEqualTo(Degradation.TIMEOUT);
        }
        assertThat(store.calls.get()).as("calls that reached the store").isEqualTo(3);
    }

    @Test
    void twoFailuresThenASuccessKeepTheCircuitClosed() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.TIMEOUT);
        limiter.tryAcquire("a", THREE_PER_MINUTE);
        limiter.tryAcquire("a", THREE_PER_MINUTE);
        store.heal();
        assertThat(limiter.tryAcquire("a", THREE_PER_MINUTE).degraded()).isFalse();
        store.failWith(Degradation.TIMEOUT);
        limiter.tryAcquire("a", THREE_PER_MINUTE);
        limiter.tryAcquire("a", THREE_PER_MINUTE);
        assertThat(limiter.storeHealthy())
                .as("the count restarted after the success")
                .isTrue();
    }

    @Test
    void oneProbePerIntervalAndTheFirstSuccessHandsBackToTheStore() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FALLBACK_LOCAL);
        store.failWith(Degradation.UNAVAILABLE);
        for (int i = 0; i < 3; i++) {
            limiter.tryAcquire("k", THREE_PER_MINUTE);
        }
        int before = store.calls.get();
        ticker.advance(PROBE.minusNanos(1));
        limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(store.calls.get()).as("no probe before the interval").isEqualTo(before);

        ticker.advanceNanos(1);
        limiter.tryAcquire("k", THREE_PER_MINUTE); // the probe, still failing
        limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(store.calls.get()).as("exactly one probe").isEqualTo(before + 1);
        assertThat(limiter.storeHealthy()).isFalse();

        store.heal();
        ticker.advance(PROBE);
        Decision fromStore = limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(fromStore.degraded()).isFalse();
        assertThat(fromStore.remaining())
                .as("the store's own state: its first take of this key")
                .isEqualTo(2);
        assertThat(limiter.storeHealthy()).isTrue();
        assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).degraded()).isFalse();
    }

    @Test
    void racingThreadsSendExactlyOneProbePerInterval() throws InterruptedException {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.TIMEOUT);
        for (int i = 0; i < 3; i++) {
            limiter.tryAcquire("k", THREE_PER_MINUTE);
        }
        for (int round = 1; round <= 5; round++) {
            ticker.advance(PROBE);
            int before = store.calls.get();
            Thread[] threads = new Thread[8];
            for (int t = 0; t < threads.length; t++) {
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < 1_000; i++) {
                        limiter.tryAcquire("k", THREE_PER_MINUTE);
                    }
                });
                threads[t].start();
            }
            for (Thread t : threads) {
                t.join();
            }
            assertThat(store.calls.get() - before)
                    .as("probes in round " + round)
                    .isEqualTo(1);
        }
        assertThat(limiter.degradedCount(Degradation.TIMEOUT)).isEqualTo(3 + 5 * 8_000);
    }

    @Test
    void aStoreErrorForOneCallIsDegradedButDoesNotOpenTheCircuit() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED);
        store.failWith(Degradation.STORE_ERROR);
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).degradation()).isEqualTo(Degradation.STORE_ERROR);
        }
        assertThat(limiter.storeHealthy()).isTrue();
        assertThat(store.calls.get()).isEqualTo(5);
    }

    @Test
    void anUnexpectedRuntimeExceptionCountsAsAStoreError() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failure = new IllegalStateException("driver bug");
        assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).degradation()).isEqualTo(Degradation.STORE_ERROR);
    }

    @Test
    void badInputIsRejectedEvenWhileTheCircuitIsOpen() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.TIMEOUT);
        for (int i = 0; i < 3; i++) {
            limiter.tryAcquire("k", THREE_PER_MINUTE);
        }
        assertThatThrownBy(() -> limiter.tryAcquire("k", THREE_PER_MINUTE, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cost 4");
        assertThatThrownBy(() -> limiter.tryAcquire("", THREE_PER_MINUTE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> limiter.reserve("k", Limit.fixedWindow(3, Duration.ofMinutes(1)), 1, Duration.ZERO))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(limiter.degradedCount(Degradation.TIMEOUT)).isEqualTo(3);
    }

    @Test
    void theCallersMistakesReportedByTheStorePropagate() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_OPEN);
        store.failure = new IllegalArgumentException("key too long for this store");
        assertThatThrownBy(() -> limiter.tryAcquire("k", THREE_PER_MINUTE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("key too long for this store");
        assertThat(limiter.storeHealthy()).isTrue();
    }

    @Test
    void theAsyncPathAppliesThePolicyToo() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED);
        assertThat(limiter.tryAcquireAsync("k", THREE_PER_MINUTE, 1).join().degraded())
                .isFalse();
        store.failWith(Degradation.TIMEOUT);
        Decision d = limiter.tryAcquireAsync("k", THREE_PER_MINUTE, 1).join();
        assertThat(d.allowed()).isFalse();
        assertThat(d.degradation()).isEqualTo(Degradation.TIMEOUT);
    }

    /**
     * The synchronous view asks the store's synchronous view, so over a store that answers at once (the in-memory
     * one) a decision through the wrapper builds no future (bench/README.md: the same 56 B per decision as the bare
     * store); the asynchronous view asks the store's asynchronous view. Both decide alike, healthy or not.
     */
    @Test
    void eachViewAsksTheStoresOwnViewAndBothDecideAlike() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FAIL_CLOSED);
        assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).remaining()).isEqualTo(2);
        assertThat(store.asyncCalls.get()).as("asynchronous calls to the store").isZero();
        assertThat(limiter.tryAcquireAsync("k", THREE_PER_MINUTE, 1).join().remaining())
                .isEqualTo(1);
        assertThat(store.asyncCalls.get()).isEqualTo(1);
        store.failWith(Degradation.TIMEOUT);
        Decision now = limiter.tryAcquire("k", THREE_PER_MINUTE);
        Decision later = limiter.tryAcquireAsync("k", THREE_PER_MINUTE, 1).join();
        assertThat(later).isEqualTo(now);
        assertThat(now.degradation()).isEqualTo(Degradation.TIMEOUT);
        assertThat(store.calls.get()).isEqualTo(4);
    }

    @Test
    void aMultiPermitDecisionIsDegradedOnceAndAllOrNothingLocally() {
        Limit perUser = Limit.tokenBucket(1, Rate.perMinute(1));
        List<Permit> both = List.of(Permit.of("ip", THREE_PER_MINUTE), Permit.of("user", perUser));
        FailSafeRateLimiter open = limiter(FailurePolicy.FAIL_OPEN);
        store.failWith(Degradation.STORE_ERROR);
        Decision d = open.tryAcquire(both);
        assertThat(d).isEqualTo(new Decision(true, 1, 0, 0, 0, Degradation.STORE_ERROR));
        assertThat(open.degradedCount(Degradation.STORE_ERROR)).isEqualTo(1);

        FailSafeRateLimiter local = limiter(FailurePolicy.FALLBACK_LOCAL);
        assertThat(local.tryAcquire(both).allowed()).isTrue();
        assertThat(local.tryAcquire(both).allowed()).isFalse();
        assertThat(local.peek("ip", THREE_PER_MINUTE).remaining())
                .as("the denied pair took nothing")
                .isEqualTo(2);
    }

    @Test
    void reserveAndPeekFollowThePolicy() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FALLBACK_LOCAL);
        store.failWith(Degradation.TIMEOUT);
        Decision r = limiter.reserve("k", THREE_PER_MINUTE, 3, Duration.ZERO);
        assertThat(r.allowed()).isTrue();
        assertThat(r.degradation()).isEqualTo(Degradation.TIMEOUT);
        Decision p = limiter.peek("k", THREE_PER_MINUTE);
        assertThat(p.allowed()).isFalse();
        assertThat(p.remaining()).isZero();
    }

    @Test
    void aResetThatCannotReachTheStoreFailsButResetsTheLocalFallback() {
        FailSafeRateLimiter limiter = limiter(FailurePolicy.FALLBACK_LOCAL);
        store.failWith(Degradation.TIMEOUT);
        limiter.tryAcquire("k", THREE_PER_MINUTE, 3);
        assertThatThrownBy(() -> limiter.reset("k", THREE_PER_MINUTE)).isInstanceOf(StoreException.class);
        assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE, 3).allowed())
                .as("local state was reset")
                .isTrue();
    }

    @Test
    void aStoreOpenedByASupplierIsRetriedUntilItOpens() {
        AtomicInteger attempts = new AtomicInteger();
        ManualScheduler scheduler = ManualScheduler.on(ticker);
        FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(() -> {
                    if (attempts.incrementAndGet() < 3) {
                        throw new StoreException("no route to host", null, Degradation.UNAVAILABLE);
                    }
                    return store;
                })
                .policy(FailurePolicy.FAIL_CLOSED)
                .probeInterval(Duration.ofMillis(5))
                .scheduler(scheduler)
                .seams(Runnable::run, Circuit::logOffThePath)
                .build();
        // build() waited for the first attempt, which failed: the limiter decides by its policy meanwhile
        assertThat(attempts.get()).isEqualTo(1);
        Decision before = limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(before.degradation()).isEqualTo(Degradation.UNAVAILABLE);
        assertThat(before.allowed()).isFalse();
        scheduler.advance(Duration.ofMillis(4));
        assertThat(attempts.get()).as("no attempt before the probe interval").isEqualTo(1);
        scheduler.advance(Duration.ofMillis(1));
        assertThat(attempts.get()).isEqualTo(2);
        assertThat(limiter.storeHealthy()).isFalse();
        scheduler.advance(Duration.ofMillis(5));
        assertThat(limiter.storeHealthy()).isTrue();
        assertThat(attempts.get()).isEqualTo(3);
        assertThat(scheduler.pending())
                .as("nothing is scheduled once the store is open")
                .isZero();
        assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).degraded()).isFalse();
        limiter.close();
        assertThat(store.closed).isTrue();
    }

    @Test
    void aSupplierOverAHealthyStoreMakesTheFirstDecisionItself() {
        AtomicInteger attempts = new AtomicInteger();
        try (FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(() -> {
                    attempts.incrementAndGet();
                    return store;
                })
                .ticker(ticker)
                .build()) {
            assertThat(limiter.storeHealthy())
                    .as("build() waited for the store to open")
                    .isTrue();
            Decision first = limiter.tryAcquire("k", THREE_PER_MINUTE);
            assertThat(first.degraded()).isFalse();
            assertThat(store.calls.get())
                    .as("the store made the first decision")
                    .isEqualTo(1);
            assertThat(attempts.get()).isEqualTo(1);
            for (Degradation cause : Degradation.values()) {
                assertThat(limiter.degradedCount(cause)).isZero();
            }
        }
    }

    @Test
    void aSupplierThatNeitherAnswersNorFailsIsLeftToTheBackgroundAfterTheStartupWait() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService attemptThread = Executors.newSingleThreadExecutor();
        FailSafeRateLimiter limiter = assertTimeoutPreemptively(
                Duration.ofSeconds(30),
                () -> FailSafeRateLimiter.builder(() -> {
                            try {
                                release.await();
                            } catch (InterruptedException e) {
                                throw new StoreException("interrupted", e, Degradation.UNAVAILABLE);
                            }
                            return store;
                        })
                        .policy(FailurePolicy.FAIL_CLOSED)
                        .startupWait(Duration.ofMillis(20))
                        .ticker(ticker)
                        .seams(attemptThread, Circuit::logOffThePath)
                        .build(),
                "build() returns after the startup wait however long the supplier takes");
        Decision meanwhile = limiter.tryAcquire("k", THREE_PER_MINUTE);
        assertThat(meanwhile.degradation()).isEqualTo(Degradation.UNAVAILABLE);
        assertThat(meanwhile.allowed()).isFalse();
        release.countDown();
        attemptThread.shutdown(); // the attempt under way ends: once it has, the store is installed
        assertThat(attemptThread.awaitTermination(10, TimeUnit.SECONDS))
                .as("hang guard")
                .isTrue();
        assertThat(limiter.storeHealthy()).isTrue();
        assertThat(limiter.tryAcquire("k", THREE_PER_MINUTE).degraded()).isFalse();
        limiter.close();
    }

    @Test
    void aStartupWaitOutOfRangeIsRejectedWithTheFix() {
        assertThatThrownBy(() -> FailSafeRateLimiter.builder(() -> store).startupWait(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-0.001S")
                .hasMessageContaining("Duration.ofSeconds(5)");
        assertThatThrownBy(() -> FailSafeRateLimiter.builder(() -> store).startupWait(Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT1H");
    }

    @Test
    void closingBeforeTheSupplierSucceedsStopsTheOpener() {
        AtomicInteger attempts = new AtomicInteger();
        ManualScheduler scheduler = ManualScheduler.on(ticker);
        FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(() -> {
                    attempts.incrementAndGet();
                    throw new StoreException("down", null, Degradation.UNAVAILABLE);
                })
                .probeInterval(Duration.ofMillis(5))
                .scheduler(scheduler)
                .seams(Runnable::run, Circuit::logOffThePath)
                .build();
        assertThat(scheduler.pending()).as("the next attempt").isEqualTo(1);
        limiter.close();
        assertThat(scheduler.pending()).as("close() cancelled the next attempt").isZero();
        scheduler.advance(Duration.ofSeconds(1));
        assertThat(attempts.get()).isEqualTo(1);
        assertThatThrownBy(() -> limiter.reset("k", THREE_PER_MINUTE))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("not open yet");
    }

    @Test
    void closingStopsTheOpenersOwnThread() throws InterruptedException {
        CountDownLatch attempting = new CountDownLatch(1);
        AtomicReference<Thread> opener = new AtomicReference<>();
        FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(() -> {
                    opener.set(Thread.currentThread());
                    attempting.countDown();
                    try {
                        new CountDownLatch(1).await(); // an attempt that hangs until interrupted
                    } catch (InterruptedException e) {
                        throw new StoreException("interrupted", e, Degradation.UNAVAILABLE);
                    }
                    return store;
                })
                .startupWait(Duration.ZERO)
                .build();
        assertThat(attempting.await(10, TimeUnit.SECONDS))
                .as("the attempt started")
                .isTrue();
        Thread t = opener.get();
        assertThat(t.getName()).startsWith("sluice-store-opener-");
        assertThat(t.isDaemon()).isTrue();
        limiter.close();
        t.join(Duration.ofSeconds(10).toMillis()); // the hang guard: close() interrupted the attempt, ended the thread
        assertThat(t.isAlive()).as(t.getName()).isFalse();
    }

    /** An in-memory store that throws what it is told to instead of deciding. */
    static final class FlakyStore implements RateLimiter {
        private final InMemoryRateLimiter memory;
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger asyncCalls = new AtomicInteger();
        volatile RuntimeException failure;
        volatile boolean closed;

        FlakyStore(Ticker ticker) {
            memory = InMemoryRateLimiter.builder().ticker(ticker).build();
        }

        void failWith(Degradation cause) {
            failure = new StoreException("store says " + cause.label(), null, cause);
        }

        void heal() {
            failure = null;
        }

        private void call() {
            calls.incrementAndGet();
            RuntimeException f = failure;
            if (f != null) {
                throw f;
            }
        }

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            call();
            return memory.tryAcquire(key, limit, cost);
        }

        @Override
        public java.util.concurrent.CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            asyncCalls.incrementAndGet();
            try {
                return java.util.concurrent.CompletableFuture.completedFuture(tryAcquire(key, limit, cost));
            } catch (RuntimeException e) {
                return java.util.concurrent.CompletableFuture.failedFuture(e);
            }
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            call();
            return memory.tryAcquire(permits);
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            call();
            return memory.reserve(key, limit, cost, maxWait);
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            call();
            return memory.peek(key, limit, cost);
        }

        @Override
        public void reset(String key, Limit limit) {
            call();
            memory.reset(key, limit);
        }

        /** The in-memory store's slots, failing as the store's decisions do. */
        @Override
        public InFlightLimiter inFlight() {
            InFlightLimiter slots = memory.inFlight();
            return new InFlightLimiter() {
                @Override
                public Decision tryAcquire(String key, long max, String holder, Duration lease) {
                    call();
                    return slots.tryAcquire(key, max, holder, lease);
                }

                @Override
                public CompletableFuture<Decision> tryAcquireAsync(
                        String key, long max, String holder, Duration lease) {
                    return async(() -> tryAcquire(key, max, holder, lease));
                }

                @Override
                public boolean release(String key, String holder) {
                    call();
                    return slots.release(key, holder);
                }

                @Override
                public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
                    return async(() -> release(key, holder));
                }

                @Override
                public boolean renew(String key, String holder, Duration lease) {
                    call();
                    return slots.renew(key, holder, lease);
                }

                @Override
                public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
                    return async(() -> renew(key, holder, lease));
                }
            };
        }

        private static <T> CompletableFuture<T> async(java.util.function.Supplier<T> call) {
            try {
                return CompletableFuture.completedFuture(call.get());
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        @Override
        public Decision tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration within) {
            call();
            return memory.tryAcquireEstimate(key, limit, estimate, id, within);
        }

        @Override
        public dev.sluice.Settlement settle(String key, Limit limit, String id, long actual) {
            call();
            return memory.settle(key, limit, id, actual);
        }

        @Override
        public void close() {
            closed = true;
            memory.close();
        }
    }
}
