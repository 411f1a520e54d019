package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Issues 29 and 30: one process's slot steps on a hot key never race each other under
 * {@code default_transaction_isolation = serializable}: a key's slots are in one statement of the limiter at a time
 * (batched: many steps a statement; {@code batching(false)}: one step a statement, one after the other). Counted, not
 * timed: the holders at once (never more than the maximum), the errors (none), the limiter's retries (none: its
 * conflicts could only be its own) and the statements sent, on the JDBC side
 * ({@link RoundTripTest.CountingDataSource}).
 */
class SerializableHotSlotsTest {
    private static final int THREADS = 8;
    private static final int ROUNDS = 40;
    private static final long MAX = 3;
    /** Longer than any run: no lease ends while it is held, so every release and renew of a holder finds it. */
    private static final Duration LEASE = Duration.ofMinutes(10);

    @Test
    void batchedStepsOnAHotKeyNeverExceedTheMaximumNeverRetryAndShareStatements() throws Exception {
        Run r = run(true);
        assertThat(r.statements)
                .as("many steps a statement under load (%d steps)", r.steps)
                .isLessThan(r.steps);
    }

    @Test
    void unbatchedStepsOnAHotKeyNeverExceedTheMaximumNorRetry() throws Exception {
        Run r = run(false);
        assertThat(r.statements).as("one statement a step").isEqualTo(r.steps);
    }

    /** What a run counted: steps made, statements sent. */
    private record Run(long steps, long statements) {}

    /**
     * {@value #THREADS} threads, {@value #ROUNDS} rounds each, on one key's {@value #MAX} slots: acquire (a holder of
     * its own), and when allowed renew and release; the holders between an allowed acquire and its release are
     * counted at once.
     */
    private static Run run(boolean batched) throws Exception {
        RoundTripTest.CountingDataSource ds = new RoundTripTest.CountingDataSource(TestDatabase.serializable());
        PostgresRateLimiter.Builder b = PostgresRateLimiter.builder(ds); // every default, the budget included
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (PostgresRateLimiter rl = batched ? b.build() : b.batching(false).build()) {
            InFlightLimiter slots = rl.inFlight();
            String key = "serializable-slots:" + UUID.randomUUID();
            ds.calls.set(0); // build() made its warm-up round trips
            AtomicInteger holding = new AtomicInteger();
            AtomicInteger mostAtOnce = new AtomicInteger();
            AtomicLong allowed = new AtomicLong();
            AtomicLong denied = new AtomicLong();
            AtomicLong steps = new AtomicLong();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int n = 0; n < ROUNDS; n++) {
                        String holder = "h" + thread + "-" + n;
                        Decision d = slots.tryAcquire(key, MAX, holder, LEASE);
                        steps.incrementAndGet();
                        if (!d.allowed()) {
                            denied.incrementAndGet();
                            continue;
                        }
                        allowed.incrementAndGet();
                        mostAtOnce.accumulateAndGet(holding.incrementAndGet(), Math::max);
                        assertThat(slots.renew(key, holder, LEASE))
                                .as("a holder renews")
                                .isTrue();
                        holding.decrementAndGet();
                        assertThat(slots.release(key, holder))
                                .as("a holder releases")
                                .isTrue();
                        steps.addAndGet(2);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(2, TimeUnit.MINUTES); // rethrows whatever reached a caller (0 errors); a hang guard
            }
            long statements = ds.calls.get();
            String what = (batched ? "batched" : "batching(false)") + ": " + allowed + " allowed, " + denied
                    + " denied, at most " + mostAtOnce + " held at once, " + steps + " steps in " + statements
                    + " statements, " + rl.stats();
            System.out.println(what);
            assertThat(allowed.get() + denied.get()).as(what).isEqualTo((long) THREADS * ROUNDS);
            assertThat(mostAtOnce.get()).as(what).isBetween(1, (int) MAX);
            assertThat(rl.stats().retries())
                    .as("%s: one process's steps on a key never race each other", what)
                    .isZero();
            assertThat(slots.tryAcquire(key, MAX, "last", LEASE).remaining())
                    .as("every slot was given back")
                    .isEqualTo(MAX - 1);
            return new Run(steps.get(), statements);
        } finally {
            pool.shutdownNow();
        }
    }
}
