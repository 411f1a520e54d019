package dev.sluice.postgres;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Exact;
import dev.sluice.algorithm.LogState;
import dev.sluice.algorithm.Settle;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;
import dev.sluice.postgres.JdbcAttempt.Db;
import dev.sluice.store.StoreClock;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Objects;

/**
 * The statement of a {@code settle}: one call of the family's settle function (007_settle.sql, 007_settle_windows.sql), which takes the
 * reservation off the pending table if it is still pending, locks the key's row and applies {@code actual − estimate}
 * as {@link dev.sluice.RateLimiter#settle} defines it per algorithm, all in one statement (autocommit: all or
 * nothing). It answers with what it charged or gave back and the state it wrote; the permits remaining are read from
 * that state here, as the algorithm's {@code Decision} would say them. The pure step ({@link Settle}) on the state the
 * function found must settle the same, a check that catches functions of another Sluice version (as a decision's).
 */
final class SettleStatements {
    /** The SQLSTATE of a reservation id already pending on the key and limit (007_settle.sql raises it). */
    static final String ALREADY_PENDING = "SL001";

    private final Sql sql;
    private final String schema;

    SettleStatements(Sql sql, String schema) {
        this.sql = sql;
        this.schema = schema;
    }

    /** What {@code tryAcquireEstimate} throws for an id already pending: nothing was taken. */
    static IllegalArgumentException alreadyPending(String id, String key, Limit limit) {
        return new IllegalArgumentException("reservation '" + id + "' is already pending on key '" + key + "' under "
                + limit.describe() + ": nothing was taken; use a new id per reservation (e.g. a UUID)");
    }

    /**
     * A {@code tryAcquireEstimate} as one statement ({@link DecisionStatements#estimate}): its Decision, or the
     * {@link IllegalArgumentException} of an id already pending (nothing was taken).
     */
    static Object estimate(
            Db c,
            DecisionStatements statements,
            String key,
            Limit limit,
            long estimate,
            String id,
            long withinNanos,
            StoreClock.Reading reading)
            throws SQLException {
        try {
            return statements.estimate(c, key, limit, estimate, id, withinNanos, reading);
        } catch (SQLException e) {
            if (ALREADY_PENDING.equals(e.getSQLState())) {
                return alreadyPending(id, key, limit);
            }
            throw e;
        }
    }

    Settlement settle(Db c, String key, Limit limit, String id, long actual, StoreClock.Reading reading)
            throws SQLException {
        Algorithm algorithm = limit.algorithm();
        String statement = switch (algorithm) {
            case TOKEN_BUCKET, GCRA -> sql.bucketSettle;
            case FIXED_WINDOW -> sql.fixedWindowSettle;
            case SLIDING_WINDOW -> sql.slidingWindowSettle;
            case SLIDING_LOG -> sql.slidingLogSettle;
        };
        try (PreparedStatement ps = c.prepare(statement)) {
            ps.setString(1, key);
            ps.setString(2, Table.limitId(limit));
            ps.setString(3, id);
            ps.setLong(4, actual);
            if (!reading.store()) {
                ps.setLong(5, reading.clientNanos());
            } else { // the wire form of "the database's clock"
                ps.setNull(5, Types.BIGINT);
            }
            if (algorithm.isTat()) {
                ps.setLong(6, limit.timeScale());
                ps.setLong(7, limit.intervalScaled());
                ps.setLong(8, limit.capacityScaled());
                ps.setString(9, Table.numbers(limit));
            } else {
                ps.setLong(6, limit.periodNanos());
                ps.setLong(7, limit.capacity());
                ps.setString(8, Table.numbers(limit));
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the settle function returned no row", "XX000");
                }
                if (algorithm.isTat()) {
                    return tatSettlement(rs, 1, limit, actual);
                }
                if (!rs.getBoolean(1)) {
                    return Settlement.NOT_PENDING;
                }
                long estimate = rs.getLong(2);
                State pre;
                long remaining;
                if (algorithm == Algorithm.SLIDING_LOG) {
                    pre = new LogState(
                            MultiPermitTransaction.longs(rs.getArray(5)), MultiPermitTransaction.longs(rs.getArray(6)));
                    remaining = logRemaining(MultiPermitTransaction.longs(rs.getArray(8)), limit);
                } else if (algorithm == Algorithm.SLIDING_WINDOW) {
                    pre = new SlidingWindowState(rs.getLong(5), rs.getLong(6), rs.getLong(7));
                    remaining = slidingRemaining(rs.getLong(8), rs.getLong(9), rs.getLong(10), limit);
                } else {
                    pre = new WindowState(rs.getLong(5), rs.getLong(7));
                    remaining = Math.max(0, limit.capacity() - rs.getLong(9));
                }
                long now = rs.getLong(algorithm == Algorithm.SLIDING_LOG ? 9 : 10);
                Settlement done = new Settlement(true, estimate, rs.getLong(4), remaining);
                check(
                        done,
                        Settle.settle(pre, now, limit, estimate, rs.getLong(3), actual)
                                .settlement(),
                        pre,
                        now,
                        limit);
                return done;
            }
        }
    }

    /**
     * A token-bucket or GCRA settle's answer from the columns {@code settled, estimate, reserved_ns, adjusted,
     * pre_backlog, pre_at_ns, post_backlog, now_ns} starting at {@code first}.
     */
    private Settlement tatSettlement(ResultSet rs, int first, Limit limit, long actual) throws SQLException {
        if (!rs.getBoolean(first)) {
            return Settlement.NOT_PENDING;
        }
        long estimate = rs.getLong(first + 1);
        TatState pre = new TatState(rs.getLong(first + 4), rs.getLong(first + 5));
        long now = rs.getLong(first + 7);
        Settlement done = new Settlement(
                true, estimate, rs.getLong(first + 3), Settle.tatRemaining(rs.getLong(first + 6), limit));
        check(
                done,
                Settle.settle(pre, now, limit, estimate, rs.getLong(first + 2), actual)
                        .settlement(),
                pre,
                now,
                limit);
        return done;
    }

    /**
     * A batch of token-bucket and GCRA requests with a reservation's estimate or settle among them, in one statement
     * ({@code sluice_bucket_batch}, one commit for all): each answer as its request alone would have it, an id already
     * pending included (as its exception: the others still go).
     */
    List<Object> bucketBatch(Db c, List<Batcher.Request> batch, DecisionStatements statements) throws SQLException {
        int n = batch.size();
        Integer[] ops = new Integer[n];
        String[] ids = new String[n];
        Long[] withins = new Long[n];
        for (int i = 0; i < n; i++) {
            Batcher.Reservation reservation = batch.get(i).reservation();
            ops[i] = reservation == null ? 0 : reservation.settle() ? 2 : 1;
            ids[i] = reservation == null ? null : reservation.id();
            withins[i] = reservation == null ? null : reservation.withinNanos();
        }
        Object[] out = new Object[n];
        try (PreparedStatement ps = c.prepare(sql.bucketBatch)) {
            ps.setArray(1, c.connection().createArrayOf("int4", ops));
            DecisionStatements.bindBucketArrays(ps, c, 2, batch);
            ps.setArray(11, c.connection().createArrayOf("text", ids));
            ps.setArray(12, c.connection().createArrayOf("bigint", withins));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int i = rs.getInt(1) - 1;
                    Batcher.Request r = batch.get(i);
                    Batcher.Reservation reservation = r.reservation();
                    if (reservation != null && reservation.settle()) {
                        out[i] = tatSettlement(rs, 7, r.limit(), r.cost());
                    } else if (rs.getBoolean(6)) {
                        out[i] = alreadyPending(
                                Objects.requireNonNull(reservation).id(), r.key(), r.limit());
                    } else {
                        TatState pre = new TatState(rs.getLong(3), rs.getLong(4));
                        out[i] = statements.decide(
                                rs.getBoolean(2), pre, rs.getLong(5), r.limit(), r.cost(), r.maxWaitNanos());
                    }
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (out[i] == null) {
                throw new SQLException("the batch function returned no row for element " + (i + 1), "XX000");
            }
        }
        return List.of(out);
    }

    /** The database's settle must be the pure step's on the state it found: else its functions are another version's. */
    private void check(Settlement done, Settlement reference, State pre, long now, Limit limit) {
        if (!done.equals(reference)) {
            throw new IllegalStateException("the database settled " + done + " where the reference step settles "
                    + reference + " for limit " + limit.id() + " at " + now + " ns from state " + pre
                    + ": the SQL functions in schema " + schema + " do not match this version of Sluice; run"
                    + " migrate()");
        }
    }

    /** As {@code SlidingWindow.peek} says it: {@code C − current − ⌈previous·(W − e)/W⌉}, at least 0. */
    static long slidingRemaining(long previous, long current, long nowNanos, Limit limit) {
        long w = limit.periodNanos();
        long e = Math.floorMod(nowNanos, w);
        return Math.max(0, limit.capacity() - current - Exact.mulDivCeil(previous, w - e, w));
    }

    static long logRemaining(long[] costs, Limit limit) {
        long sum = 0;
        for (long cost : costs) {
            sum += cost;
        }
        return Math.max(0, limit.capacity() - sum);
    }
}
