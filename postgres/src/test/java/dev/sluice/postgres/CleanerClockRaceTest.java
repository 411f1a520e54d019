package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * On the database's clock, a decision reads the time and then waits for its row's lock. When the holder
 * is the expiry cleaner deleting the (expired) row, the decision finds no row and creates a fresh one;
 * that fresh row must not start at the instant read before the wait — earlier than the delete, when the
 * deleted row still said "not full yet" — or the call after it is let in too early.
 *
 * <p>Each case: a first call; a "cleaner" transaction locks the row; a decider (A) reads the clock and
 * blocks on the lock (its UPDATE would admit it on the row it sees, so it waits to lock it); the
 * cleaner waits until the row has expired, deletes it with the cleaner's test ({@code expires_at <= now})
 * and commits; A finds no row and creates it; a call B right after A, asking for the whole capacity, must
 * be denied: A's permit counts from after the delete. (The sliding log reads the clock under its row lock
 * already; it is here as a witness.)
 */
class CleanerClockRaceTest {

    /** A first call of {@code firstCost}; A takes 1 (room is left, so A's UPDATE waits for the lock); B asks {@code lastCost}. */
    private record Case(String table, Limit limit, long firstCost, long lastCost) {}

    @Test
    void aTokenBucketCreatedAfterTheCleanerDeletedItsRowStartsAfterTheDelete() throws Exception {
        race(new Case("bucket", Limit.tokenBucket(10, Rate.of(10, Duration.ofSeconds(2))), 5, 10));
    }

    @Test
    void aFixedWindowCreatedAfterTheCleanerDeletedItsRowCountsInTheCurrentWindow() throws Exception {
        race(new Case("window", Limit.fixedWindow(2, Duration.ofSeconds(1)), 1, 2));
    }

    @Test
    void aSlidingWindowCreatedAfterTheCleanerDeletedItsRowCountsInTheCurrentWindow() throws Exception {
        race(new Case("window", Limit.slidingWindow(2, Duration.ofSeconds(1)), 1, 2));
    }

    @Test
    void aSlidingLogCreatedAfterTheCleanerDeletedItsRowStartsAfterTheDelete() throws Exception {
        race(new Case("log", Limit.slidingLog(2, Duration.ofSeconds(1)), 1, 2));
    }

    private static void race(Case c) throws Exception {
        String key = "clock-race-" + UUID.randomUUID();
        String where = " where key_hash = sluice_key_hash(?) and limit_id = ?";
        // A waits for the lock until the row expires (up to 2 s for a sliding window): a budget longer than that
        try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                        .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(10)))
                        .build();
                Connection cleaner = TestDatabase.dataSource().getConnection()) {
            // start early in a second, so that the first call and A's clock read share a window
            Eventually.await(
                    Duration.ofSeconds(10),
                    "the database's clock in the first 200 ms of a second",
                    () -> Math.floorMod(TestDatabase.queryLong("select sluice_now_ns()"), 1_000_000_000L)
                            <= 200_000_000L);
            assertThat(rl.tryAcquire(key, c.limit(), c.firstCost()).allowed()).isTrue();
            cleaner.setAutoCommit(false);
            long cleanerPid = single(cleaner, "select pg_backend_pid()");
            try (PreparedStatement lock =
                    cleaner.prepareStatement("select 1 from sluice_" + c.table() + where + " for update")) {
                lock.setString(1, key);
                lock.setString(2, c.limit().id());
                lock.executeQuery().close();
            }
            CompletableFuture<Decision> a = CompletableFuture.supplyAsync(() -> rl.tryAcquire(key, c.limit()));
            Eventually.await(
                    Duration.ofSeconds(60),
                    "A waits for the cleaner's lock",
                    () -> TestDatabase.queryLong(
                                    "select count(*) from pg_stat_activity where ? = any(pg_blocking_pids(pid))",
                                    (int) cleanerPid)
                            > 0);
            // the cleaner: wait until the row has expired, then delete it as ExpiryCleaner does
            Eventually.await(
                    Duration.ofSeconds(60),
                    "the row expired on the database's clock",
                    () -> single(
                                    cleaner,
                                    "select count(*) from sluice_" + c.table() + where
                                            + " and expires_at <= clock_timestamp()",
                                    key,
                                    c.limit().id())
                            > 0);
            try (PreparedStatement delete = cleaner.prepareStatement(
                    "delete from sluice_" + c.table() + where + " and expires_at <= clock_timestamp()")) {
                delete.setString(1, key);
                delete.setString(2, c.limit().id());
                assertThat(delete.executeUpdate()).isEqualTo(1);
            }
            cleaner.commit();
            cleaner.setAutoCommit(true);
            assertThat(a.get(5, TimeUnit.SECONDS).allowed())
                    .as("A: the row had expired, a full bucket")
                    .isTrue();
            Decision b = rl.tryAcquire(key, c.limit(), c.lastCost());
            assertThat(b.allowed())
                    .as("B, right after A: A's permit must count from after the delete")
                    .isFalse();
        }
    }

    private static long single(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
