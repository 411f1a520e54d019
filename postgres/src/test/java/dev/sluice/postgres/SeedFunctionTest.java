package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The seed-compatible {@code rate_limiting_token_bucket_request(rate_id, refill_per_sec, window_seconds)},
 * on the real clock ({@code clock_timestamp()}), as the seed's psql demo uses it.
 */
class SeedFunctionTest {

    private static int request(Connection c, String id, int refillPerSec, int windowSeconds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("select rate_limiting_token_bucket_request(?, ?, ?)")) {
            ps.setString(1, id);
            ps.setInt(2, refillPerSec);
            ps.setInt(3, windowSeconds);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /**
     * Lets {@code interval} pass for the bucket {@code id} without waiting for it: its last instant moves back by as
     * much, so the next call's {@code clock_timestamp()} is that much later than it (the function's only clock).
     */
    private static void pass(String id, String interval) {
        TestDatabase.execute("update rate_limiting_token_bucket set ts = ts - interval '" + interval + "' where id = '"
                + id.replace("'", "''") + "'");
    }

    /**
     * The seed's demo: with (…, 1, 10) the calls return 9, 8, … 0 and then −1; after a pause of 4 s the
     * next call returns 3. The calls here follow each other within milliseconds rather than every 100 ms
     * (see {@link #refillFractionsAreKeptNotRoundedAway} for why that matters with exact arithmetic).
     */
    @Test
    void reproducesTheSeedDemo() throws Exception {
        String id = "seed-demo:" + UUID.randomUUID();
        try (Connection c = TestDatabase.dataSource().getConnection()) {
            List<Integer> first = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                first.add(request(c, id, 1, 10));
            }
            assertThat(first).containsExactly(9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -1);
            pass(id, "4 seconds");
            // 4 s refilled 4 tokens (plus the few ms the first calls took, kept as a fraction): one is taken
            assertThat(request(c, id, 1, 10)).isEqualTo(3);
            assertThat(request(c, id, 1, 10)).isEqualTo(2);
            assertThat(request(c, id, 1, 10)).isEqualTo(1);
            assertThat(request(c, id, 1, 10)).isEqualTo(0);
            assertThat(request(c, id, 1, 10)).isEqualTo(-1);
        }
    }

    /**
     * Where exact arithmetic differs from the seed: the seed stores whole tokens in a bigint and sets
     * {@code ts} on every call, so the 0.3 token refilled between calls 300 ms apart is rounded away each
     * time, and a denied call clamps the bucket at −1 and restarts the refill: at one call every 300 ms
     * an empty seed bucket never admits again. Here the fractions add up: 0.3, 0.6, 0.9 are denied
     * (consuming nothing) and the first call at 1 s or later finds a whole token.
     */
    @Test
    void refillFractionsAreKeptNotRoundedAway() throws Exception {
        String id = "seed-fraction:" + UUID.randomUUID();
        try (Connection c = TestDatabase.dataSource().getConnection()) {
            for (int i = 9; i >= 0; i--) {
                assertThat(request(c, id, 1, 10)).isEqualTo(i);
            }
            int allowed = 0;
            for (int i = 0; i < 4; i++) {
                pass(id, "300 milliseconds");
                if (request(c, id, 1, 10) >= 0) {
                    allowed++;
                }
            }
            assertThat(allowed).isEqualTo(1);
            Long micro = TestDatabase.queryLong(
                    "select (tk * 1000000)::bigint from rate_limiting_token_bucket where id = ?", id);
            assertThat(micro)
                    .as("the fraction left after the allowed call is kept, in micro-tokens")
                    .isBetween(1L, 999_999L);
        }
    }

    /** Two first calls racing on a cold table under READ COMMITTED both succeed (the seed's second fails). */
    @Test
    void firstCallsRacingOnAColdKeyDoNotFail() throws Exception {
        int threads = 8;
        DataSource ds = TestDatabase.dataSource();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 5; round++) {
                String id = "seed-race:" + UUID.randomUUID();
                CountDownLatch start = new CountDownLatch(1);
                List<Future<Integer>> results = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    results.add(pool.submit(() -> {
                        try (Connection c = ds.getConnection()) {
                            start.await();
                            return request(c, id, 1, 60);
                        }
                    }));
                }
                start.countDown();
                List<Integer> remaining = new ArrayList<>();
                for (Future<Integer> f : results) {
                    remaining.add(f.get(1, TimeUnit.MINUTES));
                }
                // every call took one token from 60: they saw 59, 58, … 52 in some order
                assertThat(remaining).containsExactlyInAnyOrder(59, 58, 57, 56, 55, 54, 53, 52);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void defaultsAreTwoPerSecondOverSixtySeconds() throws Exception {
        String id = "seed-defaults:" + UUID.randomUUID();
        try (Connection c = TestDatabase.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("select rate_limiting_token_bucket_request(?)")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(119);
            }
        }
    }

    @Test
    void badArgumentsAreAnErrorNamingThem() throws Exception {
        try (Connection c = TestDatabase.dataSource().getConnection()) {
            assertThatThrownBy(() -> request(c, "seed-bad", 0, 10))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("refill_per_sec and window_seconds must be at least 1")
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
        }
    }
}
