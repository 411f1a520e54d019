package dev.sluice.postgres;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Exact;
import dev.sluice.postgres.JdbcAttempt.Db;
import dev.sluice.store.StoreClock;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;

/**
 * The statement of a {@code settle}: one call of the family's settle function (007_settle.sql), which takes the
 * reservation off the pending table if it is still pending, locks the key's row and applies {@code actual − estimate}
 * as {@link dev.sluice.RateLimiter#settle} defines it per algorithm, all in one statement (autocommit: all or
 * nothing). It answers with what it charged or gave back and the state it wrote; the permits remaining are read from
 * that state here, as the algorithm's {@code Decision} would say them.
 */
final class SettleStatements {
    /** The SQLSTATE of a reservation id already pending on the key and limit (007_settle.sql raises it). */
    static final String ALREADY_PENDING = "SL001";

    private final Sql sql;

    SettleStatements(Sql sql) {
        this.sql = sql;
    }

    /** What {@code tryAcquireEstimate} throws for an id already pending: nothing was taken. */
    static IllegalArgumentException alreadyPending(String id, String key, Limit limit) {
        return new IllegalArgumentException("reservation '" + id + "' is already pending on key '" + key + "' under "
                + limit.describe() + ": nothing was taken; use a new id per reservation (e.g. a UUID)");
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
                if (!rs.getBoolean(1)) {
                    return Settlement.NOT_PENDING;
                }
                long estimate = rs.getLong(2);
                long adjusted = rs.getLong(4);
                long remaining = switch (algorithm) {
                    case TOKEN_BUCKET, GCRA -> tatRemaining(rs.getLong(7), limit);
                    case FIXED_WINDOW -> Math.max(0, limit.capacity() - rs.getLong(9));
                    case SLIDING_WINDOW -> slidingRemaining(rs.getLong(8), rs.getLong(9), rs.getLong(10), limit);
                    case SLIDING_LOG -> logRemaining(MultiPermitTransaction.longs(rs.getArray(8)), limit);
                };
                return new Settlement(true, estimate, adjusted, remaining);
            }
        }
    }

    /** Whole tokens left in a bucket of backlog {@code b}: {@code floor((CP − B) / P)}, 0 in debt. */
    static long tatRemaining(long b, Limit limit) {
        long room = limit.capacityScaled() - b;
        return room < limit.intervalScaled() ? 0 : room / limit.intervalScaled();
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
