package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * SQLSTATE 40001 under {@code default_transaction_isolation = serializable}: retried inside the library while the
 * budget lasts, however many attempts that takes, counted, never seen by the caller until then; one process's
 * decisions on a hot key never conflict with each other; an exact number of admissions.
 */
class RetryTest {
    private static HikariDataSource serializable;

    @BeforeAll
    static void pool() {
        TestDatabase.dataSource();
        serializable = TestDatabase.pool("set default_transaction_isolation = serializable", 10);
    }

    @AfterAll
    static void close() {
        serializable.close();
    }

    /**
     * One process on one hot key never conflicts with itself: its decisions on a row go one statement at a time (the
     * batches' rule, and the workers' for what does not batch), so under SERIALIZABLE nothing is even retried.
     */
    @Test
    void oneProcessOnAHotKeyUnderSerializableAdmitsExactlyAndNeverConflictsWithItself() throws Exception {
        int threads = 8;
        int callsPerThread = 40;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        for (boolean batching : new boolean[] {true, false}) {
            try (PostgresRateLimiter rl =
                    TestDatabase.builder(serializable).batching(batching).build()) {
                for (Limit limit : List.of(
                        Limit.tokenBucket(100, Rate.perHour(1)),
                        Limit.slidingLog(100, Duration.ofHours(1)),
                        Limit.fixedWindow(100, Duration.ofDays(3650)))) {
                    String key = "hot:" + UUID.randomUUID();
                    long admitted = SerializableHotKeyTest.admittedAtOnce(
                            pool, threads, callsPerThread, () -> rl.tryAcquire(key, limit));
                    // 320 calls on a bucket of 100 refilling one an hour (a window of 10 years): exactly 100 pass
                    assertThat(admitted).as("%s, batching %s", limit, batching).isEqualTo(100);
                }
                PostgresRateLimiter.Stats stats = rl.stats();
                assertThat(stats.decisions()).isEqualTo(3L * threads * callsPerThread);
                assertThat(stats.retries())
                        .as("batching %s: no statement of this process raced another on its row", batching)
                        .isZero();
            }
        }
        pool.shutdownNow();
    }

    /**
     * A deterministic conflict: a transaction holds the row while the decision waits on it, then commits
     * an update, so the waiting serializable statement fails with 40001 and is retried once.
     */
    @Test
    void aSerializationFailureIsRetriedAndCounted() throws Exception {
        Limit limit = Limit.tokenBucket(10, Rate.perHour(1));
        String key = "conflict:" + UUID.randomUUID();
        try (PostgresRateLimiter rl = TestDatabase.builder(serializable).build()) {
            assertThat(rl.tryAcquire(key, limit).remaining()).isEqualTo(9);
            CompletableFuture<Decision> waiting;
            try (Connection holder = TestDatabase.dataSource().getConnection()) {
                holder.setAutoCommit(false);
                try (Statement st = holder.createStatement()) {
                    st.execute("update sluice_bucket set key = key where key_hash = sluice_key_hash('" + key
                            + "')"); // the key is a UUID we made: no quoting concerns in this test's own SQL
                }
                waiting = CompletableFuture.supplyAsync(() -> rl.tryAcquire(key, limit));
                awaitLockWaiters(1);
                holder.commit();
            }
            Decision d = waiting.get(1, TimeUnit.MINUTES);
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(8);
            assertThat(rl.stats().retries()).isEqualTo(1);
        }
    }

    /**
     * Conflict after conflict (20 in a row, more than the 16 attempts that used to be the limit) is retried while the
     * budget lasts: the backoffs wait on the limiter's scheduler, whose ticker the test holds still.
     */
    @Test
    void conflictsAreRetriedWhileTheBudgetLastsHoweverManyAttemptsThatTakes() throws Exception {
        Limit limit = Limit.tokenBucket(10, Rate.perHour(1));
        String key = "conflicts:" + UUID.randomUUID();
        ManualScheduler time = ManualScheduler.on(ManualTicker.atEpochNanos(0));
        int conflicts = 20;
        try (PostgresRateLimiter rl =
                TestDatabase.builder(serializable).scheduler(time).build()) {
            int idle = time.pending();
            assertThat(rl.tryAcquire(key, limit).remaining()).isEqualTo(9);
            CompletableFuture<Decision> waiting;
            try (Connection holder = TestDatabase.dataSource().getConnection()) {
                holder.setAutoCommit(false);
                lockRow(holder, key);
                waiting = CompletableFuture.supplyAsync(() -> rl.tryAcquire(key, limit));
                for (int i = 0; i < conflicts; i++) {
                    awaitLockWaiters(1);
                    holder.commit(); // the waiting serializable statement fails with 40001
                    awaitBackoff(time, idle);
                    lockRow(holder, key); // and its next attempt will wait for the row again
                    time.advance(RetryPolicy.DEFAULT.maxBackoff()); // the backoff ends, well within the budget
                }
                awaitLockWaiters(1);
                holder.rollback(); // changed nothing: this attempt goes through
            }
            Decision d = waiting.get(1, TimeUnit.MINUTES);
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(8);
            assertThat(rl.stats().retries()).isEqualTo(conflicts);
            assertThat(rl.stats().retriesExhausted()).isZero();
        }
    }

    /**
     * Conflicts that outlast the budget fail the decision as a timeout that names them, and it took nothing. The
     * scheduler's ticker passes the budget's end while the decision backs off.
     */
    @Test
    void conflictsThatOutlastTheBudgetFailTheDecisionAsATimeoutThatTookNothing() throws Exception {
        Limit limit = Limit.tokenBucket(10, Rate.perHour(1));
        String key = "conflict-budget:" + UUID.randomUUID();
        ManualScheduler time = ManualScheduler.on(ManualTicker.atEpochNanos(0));
        try (PostgresRateLimiter rl =
                TestDatabase.builder(serializable).scheduler(time).build()) {
            int idle = time.pending();
            rl.tryAcquire(key, limit);
            CompletableFuture<Decision> waiting;
            try (Connection holder = TestDatabase.dataSource().getConnection()) {
                holder.setAutoCommit(false);
                lockRow(holder, key);
                waiting = CompletableFuture.supplyAsync(() -> rl.tryAcquire(key, limit));
                awaitLockWaiters(1);
                holder.commit();
            }
            awaitBackoff(time, idle);
            time.ticker().advance(TestDatabase.GENEROUS.budget()); // the budget is over while it backs off
            time.runDue();
            assertThatThrownBy(() -> waiting.get(1, TimeUnit.MINUTES))
                    .hasCauseInstanceOf(PostgresStoreException.class)
                    .cause()
                    .hasMessageContaining("gave up after 1 attempt(s)")
                    .hasMessageContaining("40001")
                    .hasMessageContaining("outlasted the time budget of 10000 ms")
                    .satisfies(e -> assertThat(((PostgresStoreException) e).degradation())
                            .isEqualTo(Degradation.TIMEOUT));
            assertThat(rl.stats().retriesExhausted()).isEqualTo(1);
            assertThat(rl.stats().retries()).isZero();
            assertThat(rl.tryAcquire(key, limit).remaining())
                    .as("the failed attempt took nothing")
                    .isEqualTo(8);
        }
    }

    /** Takes the row's lock in {@code holder}'s open transaction (an update that changes nothing visible). */
    private static void lockRow(Connection holder, String key) throws SQLException {
        try (Statement st = holder.createStatement()) {
            // the key is a UUID we made: no quoting concerns in this test's own SQL
            st.execute("update sluice_bucket set key = key where key_hash = sluice_key_hash('" + key + "')");
        }
    }

    /** Waits until the limiter has scheduled a backoff (more tasks than {@code idle} on its scheduler). */
    private static void awaitBackoff(ManualScheduler time, int idle) {
        Eventually.await(
                Duration.ofSeconds(30), "the limiter backing off after the conflict", () -> time.pending() > idle);
    }

    private static void awaitLockWaiters(int n) {
        Eventually.await(Duration.ofSeconds(30), n + " statement(s) waiting for the row lock", () -> {
            Long waiting =
                    TestDatabase.queryLong("select count(*) from pg_stat_activity where wait_event_type = 'Lock'");
            return waiting != null && waiting >= n;
        });
    }
}
