package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Rate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** A closed limiter says so on every path, and a request racing close is answered, never stranded. */
class CloseTest {

    private static final Limit BUCKET = Limit.tokenBucket(5, Rate.perHour(5));

    private static void assertClosed(Runnable call) {
        assertThatThrownBy(call::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
    }

    @Test
    void everyCallOnAClosedLimiterIsAnIllegalStateException() {
        for (boolean batching : new boolean[] {false, true}) {
            PostgresRateLimiter.Builder b = TestDatabase.builder(TestDatabase.dataSource());
            PostgresRateLimiter rl =
                    batching ? b.batching(8, 2).build() : b.batching(false).build();
            ExpiryCleaner manual = rl.manualCleaner(10, 1);
            rl.close();
            rl.close(); // idempotent
            assertClosed(() -> rl.tryAcquire("k", BUCKET));
            assertClosed(() -> rl.tryAcquire("k", Limit.fixedWindow(1, Duration.ofHours(1))));
            assertClosed(() -> {
                CompletableFuture<Decision> unused = rl.tryAcquireAsync("k", BUCKET, 1); // it throws at once
            });
            assertClosed(() -> {
                CompletableFuture<Decision> unused =
                        rl.tryAcquireAsync("k", Limit.slidingLog(1, Duration.ofHours(1)), 1); // it throws at once
            });
            assertClosed(() -> rl.reserve("k", BUCKET, 1, Duration.ofSeconds(1)));
            assertClosed(() -> rl.reset("k", BUCKET));
            assertClosed(() -> rl.tryAcquire(List.of(Permit.of("a", BUCKET), Permit.of("b", BUCKET))));
            assertClosed(rl::migrate);
            assertClosed(() -> rl.cleaner(Duration.ofMinutes(1)));
            assertClosed(() -> rl.manualCleaner(10, 1));
            assertClosed(manual::sweep);
        }
    }

    /**
     * The window the reviewer found (submit checked "open", then close() drained the queue and stopped the
     * dispatchers, then submit added its request) is closed by the batching policy's lock: a request submitted after
     * close is answered "closed" at once, not left in a queue nobody reads.
     */
    @Test
    void aRequestSubmittedAfterCloseIsAnswered() throws Exception {
        Batcher<Batcher.Request> batcher = new Batcher<>(
                8,
                2,
                100,
                batch -> {
                    throw new AssertionError("nothing should be sent");
                },
                (what, cause) -> new PostgresStoreException(what, null, cause, Degradation.OVERLOADED),
                dev.sluice.Scheduler.system().threadFactory("postgres-batch"));
        batcher.close();
        Batcher.Request late = new Batcher.Request(
                "k",
                BUCKET,
                1,
                -1,
                dev.sluice.store.StoreClock.Reading.STORE,
                new DecisionCall(System.nanoTime() + TimeUnit.SECONDS.toNanos(10)),
                new CompletableFuture<>());
        batcher.submit(late);
        assertThatThrownBy(() -> late.result().get(5, TimeUnit.SECONDS))
                .as("answered, not stranded in a queue nobody reads")
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
    }

    /** Async calls racing close: each one throws "closed" or returns a future that completes (a decision or "closed"). */
    @Test
    void asyncCallsRacingCloseEndInADecisionOrClosed() throws Exception {
        for (boolean batching : new boolean[] {false, true}) {
            for (int round = 0; round < 5; round++) {
                PostgresRateLimiter.Builder b = TestDatabase.builder(TestDatabase.dataSource());
                PostgresRateLimiter rl =
                        batching ? b.batching(4, 2).build() : b.batching(false).build();
                String key = "close-race-" + UUID.randomUUID();
                List<CompletableFuture<Decision>> futures = new java.util.concurrent.CopyOnWriteArrayList<>();
                List<Throwable> thrown = new java.util.concurrent.CopyOnWriteArrayList<>();
                List<Thread> callers = new ArrayList<>();
                CountDownLatch go = new CountDownLatch(1);
                for (int t = 0; t < 4; t++) {
                    Thread th = new Thread(() -> {
                        try {
                            go.await();
                        } catch (InterruptedException e) {
                            return;
                        }
                        for (int i = 0; i < 200; i++) {
                            try {
                                futures.add(rl.tryAcquireAsync(key, BUCKET, 1));
                            } catch (RuntimeException e) {
                                thrown.add(e);
                            }
                        }
                    });
                    th.start();
                    callers.add(th);
                }
                go.countDown();
                // close() lands at another point of the 800 calls each round: after 40, 80, … of them were made
                int made = 40 * (round + 1);
                long guard = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (futures.size() + thrown.size() < made && System.nanoTime() - guard < 0) {
                    Thread.onSpinWait();
                }
                rl.close();
                for (Thread th : callers) {
                    th.join(10_000);
                }
                for (Throwable e : thrown) {
                    assertThat(e).isInstanceOf(IllegalStateException.class).hasMessageContaining("is closed");
                }
                for (CompletableFuture<Decision> f : futures) {
                    try {
                        f.get(10, TimeUnit.SECONDS);
                    } catch (TimeoutException e) {
                        throw new AssertionError("a future never completed", e);
                    } catch (ExecutionException e) {
                        assertThat(e.getCause())
                                .isInstanceOf(IllegalStateException.class)
                                .hasMessageContaining("is closed");
                    }
                }
            }
        }
    }
}
