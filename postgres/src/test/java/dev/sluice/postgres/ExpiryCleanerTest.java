package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Limit;
import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The expiry cleaner deletes rows whose state equals a fresh key's, in bounded batches, without changing
 * any decision. Each test works in a private schema, so counts are its own.
 */
class ExpiryCleanerTest {
    /** 2030-01-01T00:00:00Z: later than any row other tests leave. */
    private static final long T = 1_893_456_000L * 1_000_000_000L;

    private static PostgresRateLimiter limiter(String schema, ManualTicker t) {
        PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                .schema(schema)
                .ticker(t)
                .build();
        rl.migrate();
        return rl;
    }

    private static long rows(String schema, String table) {
        return TestDatabase.queryLong("select count(*) from " + schema + ".sluice_" + table);
    }

    @Test
    void expiredRowsGoAndLiveRowsStay() {
        String schema = "clean_" + UUID.randomUUID().toString().substring(0, 8);
        ManualTicker t = ManualTicker.atEpochNanos(T);
        Limit shortBucket = Limit.tokenBucket(5, Rate.perSecond(5)); // full again 1 s after a call of 5
        Limit longBucket = Limit.tokenBucket(5, Rate.perHour(5));
        Limit window = Limit.fixedWindow(5, Duration.ofSeconds(1));
        Limit log = Limit.slidingLog(5, Duration.ofSeconds(2));
        try (PostgresRateLimiter rl = limiter(schema, t)) {
            for (int i = 0; i < 30; i++) {
                rl.tryAcquire("short-" + i, shortBucket, 5);
                rl.tryAcquire("long-" + i, longBucket, 1);
                rl.tryAcquire("window-" + i, window, 1);
                rl.tryAcquire("log-" + i, log, 1);
            }
            ExpiryCleaner cleaner = rl.manualCleaner(1_000, 10);
            assertThat(cleaner.sweep()).as("nothing has expired yet").isZero();
            t.advance(Duration.ofMillis(999));
            assertThat(cleaner.sweep())
                    .as("0.999 s: the short buckets hold 0.2 token less than full")
                    .isZero();
            t.advance(Duration.ofMillis(1));
            // 1 s: short buckets full again, the fixed windows are over; logs and long buckets still live
            assertThat(cleaner.sweep()).isEqualTo(60);
            assertThat(rows(schema, "bucket")).isEqualTo(30);
            assertThat(rows(schema, "window")).isZero();
            assertThat(rows(schema, "log")).isEqualTo(30);
            t.advance(Duration.ofSeconds(1));
            assertThat(cleaner.sweep()).isEqualTo(30);
            assertThat(rows(schema, "log")).isZero();
            assertThat(rows(schema, "bucket")).as("live buckets stay").isEqualTo(30);
            // deleting changed no decision: a long bucket still holds its 4 tokens
            assertThat(rl.tryAcquire("long-0", longBucket, 4).remaining()).isZero();
            assertThat(rl.tryAcquire("short-0", shortBucket, 5).allowed()).isTrue();
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    @Test
    void aSweepDeletesAtMostItsBatchesAndTheNextSweepGoesOn() {
        String schema = "clean_" + UUID.randomUUID().toString().substring(0, 8);
        ManualTicker t = ManualTicker.atEpochNanos(T);
        Limit window = Limit.fixedWindow(5, Duration.ofSeconds(1));
        try (PostgresRateLimiter rl = limiter(schema, t)) {
            for (int i = 0; i < 25; i++) {
                rl.tryAcquire("k-" + i, window, 1);
            }
            t.advance(Duration.ofSeconds(1));
            ExpiryCleaner cleaner = rl.manualCleaner(10, 2);
            assertThat(cleaner.sweep()).as("2 batches of 10").isEqualTo(20);
            assertThat(rows(schema, "window")).isEqualTo(5);
            assertThat(cleaner.sweep()).isEqualTo(5);
            assertThat(cleaner.deletedRows()).isEqualTo(25);
            assertThat(cleaner.sweeps()).isEqualTo(2);
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    @Test
    void aScheduledCleanerSweepsEachIntervalUntilStopped() {
        String schema = "clean_" + UUID.randomUUID().toString().substring(0, 8);
        ManualTicker t = ManualTicker.atEpochNanos(T);
        ManualScheduler scheduler = ManualScheduler.on(t);
        Limit window = Limit.fixedWindow(5, Duration.ofSeconds(1));
        try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                .schema(schema)
                .ticker(t)
                .scheduler(scheduler)
                .build()) {
            rl.migrate();
            for (int i = 0; i < 10; i++) {
                rl.tryAcquire("k-" + i, window, 1);
            }
            t.advance(Duration.ofSeconds(1));
            ExpiryCleaner cleaner = rl.cleaner(Duration.ofMinutes(1));
            scheduler.advance(Duration.ofSeconds(59));
            assertThat(cleaner.sweeps()).as("not before the interval").isZero();
            assertThat(rows(schema, "window")).isEqualTo(10);
            scheduler.advance(Duration.ofSeconds(1));
            // the sweep is JDBC on the cleaner's own thread: this awaits it, asserting nothing on time
            Eventually.await(Duration.ofSeconds(30), "the first sweep", () -> cleaner.sweeps() == 1);
            assertThat(rows(schema, "window")).isZero();
            Eventually.await(Duration.ofSeconds(30), "the next sweep scheduled", () -> scheduler.pending() == 1);
            cleaner.close();
            assertThat(scheduler.pending())
                    .as("close() cancelled the next sweep")
                    .isZero();
            scheduler.advance(Duration.ofHours(1));
            assertThat(cleaner.sweeps()).as("no sweep after close").isEqualTo(1);
            assertThat(cleaner.failedSweeps()).isZero();
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    /**
     * Decisions hammer keys whose rows have just expired while a cleaner sweeps in a loop: whichever wins
     * each row, exactly the capacity is admitted per key and round.
     */
    @Test
    void aDecisionRacingTheCleanerStaysExact() throws Exception {
        String schema = "clean_" + UUID.randomUUID().toString().substring(0, 8);
        ManualTicker t = ManualTicker.atEpochNanos(T);
        Limit limit = Limit.tokenBucket(20, Rate.perSecond(20));
        int keys = 20;
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (PostgresRateLimiter rl = limiter(schema, t)) {
            ExpiryCleaner cleaner = rl.manualCleaner(7, 1000);
            for (int round = 0; round < 4; round++) {
                t.advance(Duration.ofSeconds(1)); // every row of the previous round is full again: expired
                AtomicBoolean stop = new AtomicBoolean();
                Future<?> sweeping = pool.submit(() -> {
                    while (!stop.get()) {
                        cleaner.sweep();
                    }
                    return null;
                });
                AtomicLong admitted = new AtomicLong();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> deciders = new ArrayList<>();
                for (int d = 0; d < 3; d++) {
                    deciders.add(pool.submit(() -> {
                        go.await();
                        for (int n = 0; n < 12; n++) {
                            for (int k = 0; k < keys; k++) {
                                if (rl.tryAcquire("race-" + k, limit, 2).allowed()) {
                                    admitted.addAndGet(2);
                                }
                            }
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> f : deciders) {
                    f.get(2, TimeUnit.MINUTES);
                }
                stop.set(true);
                sweeping.get(1, TimeUnit.MINUTES);
                assertThat(admitted.get()).as("round %d", round).isEqualTo(20L * keys);
            }
        } finally {
            pool.shutdownNow();
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    @Test
    void badSettingsAreRejected() {
        try (PostgresRateLimiter rl = TestDatabase.limiter(TestDatabase.dataSource())) {
            assertThatThrownBy(() -> rl.manualCleaner(0, 10))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("batchSize 0");
            assertThatThrownBy(() -> rl.manualCleaner(1000, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maxBatchesPerSweep 0");
            assertThatThrownBy(() -> rl.cleaner(Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("interval");
        }
    }
}
