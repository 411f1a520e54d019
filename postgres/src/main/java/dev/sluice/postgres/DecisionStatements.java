package dev.sluice.postgres;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Gcra;
import dev.sluice.algorithm.LogState;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;
import dev.sluice.postgres.JdbcAttempt.Db;
import dev.sluice.store.StoreClock;
import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The statements of a single-key decision, per table family: which SQL function or query, how its parameters are
 * bound (the client's time as SQL {@code NULL} when the database's clock decides), and how its answer is decoded.
 *
 * <p>For the token bucket, GCRA and both window counters the function is one {@code UPDATE … WHERE <admission
 * test>} when allowed and a plain {@code SELECT} when denied; the sliding log locks the row ({@code SELECT … FOR
 * UPDATE}), decides, and updates when allowed. A first call for a key inserts the row; two first calls racing on a
 * cold table do not fail (the loser of the INSERT decides again on the winner's row). The clock is never taken
 * earlier than the instant stored in the row, so time does not run backwards between successive deciders.
 *
 * <p>The store decides, once: the function's verdict is the decision, taken atomically where the state lives. Its
 * answer is the state it decided on and its instant, which the pure step of {@code dev.sluice.algorithm} decodes
 * into the {@link Decision}'s remaining, retryAfter and resetAfter, so they are exactly the in-memory store's,
 * rounded the same way, without a second copy of that arithmetic in SQL. The step's verdict on the same state must
 * equal the function's, a check that costs one comparison and catches functions of another Sluice version. Batched
 * token-bucket and GCRA decisions travel as one statement of arrays ({@link #acquireMany}).
 */
final class DecisionStatements {
    private final Sql sql;
    private final String schema;

    DecisionStatements(Sql sql, String schema) {
        this.sql = sql;
        this.schema = schema;
    }

    Decision peek(Db c, String key, Limit limit, long cost, StoreClock.Reading reading) throws SQLException {
        Algorithm algorithm = limit.algorithm();
        try (PreparedStatement ps = c.prepare(Table.of(limit).peek(sql))) {
            ps.setString(1, key);
            ps.setString(2, Table.limitId(limit));
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the peek statement returned no row", "XX000");
                }
                long dbClock = rs.getLong(1);
                State state = switch (algorithm) {
                    case TOKEN_BUCKET, GCRA -> {
                        long backlog = rs.getLong(2);
                        yield rs.wasNull()
                                ? TatState.FRESH
                                : StoredNumbers.read(
                                        new TatState(backlog, rs.getLong(3)),
                                        rs.getString(4),
                                        clientOr(reading, dbClock),
                                        limit);
                    }
                    case FIXED_WINDOW -> {
                        long window = rs.getLong(2);
                        yield rs.wasNull()
                                ? WindowState.FRESH
                                : StoredNumbers.read(
                                        new WindowState(window, rs.getLong(4)),
                                        rs.getString(5),
                                        clientOr(reading, dbClock),
                                        limit);
                    }
                    case SLIDING_WINDOW -> {
                        long window = rs.getLong(2);
                        yield rs.wasNull()
                                ? SlidingWindowState.FRESH
                                : StoredNumbers.read(
                                        new SlidingWindowState(window, rs.getLong(3), rs.getLong(4)),
                                        rs.getString(5),
                                        clientOr(reading, dbClock),
                                        limit);
                    }
                    case SLIDING_LOG -> {
                        Array times = rs.getArray(2);
                        yield times == null
                                ? LogState.FRESH
                                : StoredNumbers.read(
                                        new LogState(
                                                MultiPermitTransaction.longs(times),
                                                MultiPermitTransaction.longs(rs.getArray(3))),
                                        rs.getString(4),
                                        clientOr(reading, dbClock),
                                        limit);
                    }
                };
                long now = Math.max(
                        reading.store() ? dbClock : reading.clientNanos(),
                        MultiPermitTransaction.latestInstant(state, limit));
                return Algorithms.peek(state, now, limit, cost);
            }
        }
    }

    /**
     * Binds the arrays of {@code sluice_bucket_acquire}'s nine parameters, one element per request, from parameter
     * {@code first} on: the batch functions' ({@code sluice_bucket_acquire_many}, {@code sluice_bucket_batch}).
     */
    static void bindBucketArrays(PreparedStatement ps, Db c, int first, List<Batcher.Request> batch)
            throws SQLException {
        int n = batch.size();
        String[] keys = new String[n];
        String[] limitIds = new String[n];
        Long[] costs = new Long[n];
        Long[] nows = new Long[n];
        Long[] scales = new Long[n];
        Long[] intervals = new Long[n];
        Long[] capacities = new Long[n];
        Long[] maxWaits = new Long[n];
        String[] numbers = new String[n];
        for (int i = 0; i < n; i++) {
            Batcher.Request r = batch.get(i);
            Limit l = r.limit();
            keys[i] = r.key();
            limitIds[i] = Table.limitId(l);
            numbers[i] = Table.numbers(l);
            costs[i] = r.cost();
            nows[i] = r.now().store() ? null : r.now().clientNanos(); // NULL: the database's clock
            scales[i] = l.timeScale();
            intervals[i] = l.intervalScaled();
            capacities[i] = l.capacityScaled();
            maxWaits[i] = r.maxWaitNanos() >= 0 ? Gcra.maxWaitScaled(r.maxWaitNanos(), l) : null;
        }
        ps.setArray(first, c.connection().createArrayOf("text", keys));
        ps.setArray(first + 1, c.connection().createArrayOf("text", limitIds));
        ps.setArray(first + 2, c.connection().createArrayOf("bigint", costs));
        ps.setArray(first + 3, c.connection().createArrayOf("bigint", nows));
        ps.setArray(first + 4, c.connection().createArrayOf("bigint", scales));
        ps.setArray(first + 5, c.connection().createArrayOf("bigint", intervals));
        ps.setArray(first + 6, c.connection().createArrayOf("bigint", capacities));
        ps.setArray(first + 7, c.connection().createArrayOf("bigint", maxWaits));
        ps.setArray(first + 8, c.connection().createArrayOf("text", numbers));
    }

    /** Fails with SQLSTATE 42P01 when the newest migration's table is missing (a schema of an earlier version). */
    void checkNewestTable(Db c) throws SQLException {
        try (PreparedStatement ps = c.prepare(sql.newestTable)) {
            ps.executeQuery().close();
        }
    }

    private static long clientOr(StoreClock.Reading reading, long dbClock) {
        return reading.store() ? dbClock : reading.clientNanos();
    }

    /** Deletes the key's row under {@code limit}: it starts afresh. */
    Void reset(Db c, String key, Limit limit) throws SQLException {
        try (PreparedStatement ps = c.prepare(Table.of(limit).reset(sql))) {
            ps.setString(1, key);
            ps.setString(2, Table.limitId(limit));
            ps.executeUpdate();
        }
        return null;
    }

    Decision acquire(Db c, String key, Limit limit, long cost, long maxWaitNanos, StoreClock.Reading reading)
            throws SQLException {
        String statement = switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> sql.bucketAcquire;
            case FIXED_WINDOW -> sql.fixedWindowAcquire;
            case SLIDING_WINDOW -> sql.slidingWindowAcquire;
            case SLIDING_LOG -> sql.slidingLogAcquire;
        };
        return acquire(c, statement, key, limit, cost, maxWaitNanos, reading, null, 0);
    }

    /**
     * {@code tryAcquireEstimate}: the acquire function's decision on the estimate, in the same statement as the
     * pending reservation (007_settle.sql: the acquire function's parameters and answer, then the id and
     * {@code settleWithin}). A reservation of the same id already pending is SQLSTATE {@code SL001}, nothing taken.
     */
    Decision estimate(
            Db c, String key, Limit limit, long estimate, String id, long withinNanos, StoreClock.Reading reading)
            throws SQLException {
        String statement = switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> sql.bucketEstimate;
            case FIXED_WINDOW -> sql.fixedWindowEstimate;
            case SLIDING_WINDOW -> sql.slidingWindowEstimate;
            case SLIDING_LOG -> sql.slidingLogEstimate;
        };
        return acquire(c, statement, key, limit, estimate, -1, reading, id, withinNanos);
    }

    private Decision acquire(
            Db c,
            String statement,
            String key,
            Limit limit,
            long cost,
            long maxWaitNanos,
            StoreClock.Reading reading,
            @Nullable String id,
            long withinNanos)
            throws SQLException {
        Algorithm algorithm = limit.algorithm();
        try (PreparedStatement ps = c.prepare(statement)) {
            ps.setString(1, key);
            ps.setString(2, Table.limitId(limit));
            ps.setLong(3, cost);
            if (!reading.store()) {
                ps.setLong(4, reading.clientNanos());
            } else { // the wire form of "the database's clock"
                ps.setNull(4, Types.BIGINT);
            }
            if (algorithm.isTat()) {
                ps.setLong(5, limit.timeScale());
                ps.setLong(6, limit.intervalScaled());
                ps.setLong(7, limit.capacityScaled());
                if (maxWaitNanos >= 0) {
                    ps.setLong(8, Gcra.maxWaitScaled(maxWaitNanos, limit));
                } else {
                    ps.setNull(8, Types.BIGINT);
                }
                ps.setString(9, Table.numbers(limit));
            } else {
                ps.setLong(5, limit.periodNanos());
                ps.setLong(6, limit.capacity());
                ps.setString(7, Table.numbers(limit));
            }
            if (id != null) {
                int next = algorithm.isTat() ? 10 : 8;
                ps.setString(next, id);
                ps.setLong(next + 1, withinNanos);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the acquire function returned no row", "XX000");
                }
                boolean allowed = rs.getBoolean(1);
                State pre = switch (algorithm) {
                    case TOKEN_BUCKET, GCRA -> new TatState(rs.getLong(2), rs.getLong(3));
                    case FIXED_WINDOW -> new WindowState(rs.getLong(2), rs.getLong(3));
                    case SLIDING_WINDOW -> new SlidingWindowState(rs.getLong(2), rs.getLong(3), rs.getLong(4));
                    case SLIDING_LOG ->
                        new LogState(
                                MultiPermitTransaction.longs(rs.getArray(2)),
                                MultiPermitTransaction.longs(rs.getArray(3)));
                };
                long now = rs.getLong(algorithm == Algorithm.SLIDING_WINDOW ? 5 : 4);
                return decide(allowed, pre, now, limit, cost, maxWaitNanos);
            }
        }
    }

    /** The Decision from what the database found: the pure step, whose verdict must match the database's. */
    Decision decide(boolean allowed, State pre, long now, Limit limit, long cost, long maxWaitNanos) {
        Step step = maxWaitNanos >= 0
                ? Algorithms.reserve(pre, now, limit, cost, maxWaitNanos)
                : Algorithms.tryAcquire(pre, now, limit, cost);
        if (step.decision().allowed() != allowed) {
            throw new IllegalStateException("the database " + (allowed ? "allowed" : "denied")
                    + " what the reference step " + (allowed ? "denies" : "allows") + " for limit " + limit.id()
                    + " at " + now + " ns from state " + pre + ": the SQL functions in schema " + schema
                    + " do not match this version of Sluice; run migrate()");
        }
        return step.decision();
    }

    /** Decides a batch of token-bucket / GCRA requests in one statement (a batch of one: the single call). */
    List<Decision> acquireMany(Db c, List<Batcher.Request> batch) throws SQLException {
        int n = batch.size();
        Decision[] out = new Decision[n];
        try (PreparedStatement ps = c.prepare(sql.bucketAcquireMany)) {
            bindBucketArrays(ps, c, 1, batch);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int i = rs.getInt(1) - 1;
                    Batcher.Request r = batch.get(i);
                    out[i] = decide(
                            rs.getBoolean(2),
                            new TatState(rs.getLong(3), rs.getLong(4)),
                            rs.getLong(5),
                            r.limit(),
                            r.cost(),
                            r.maxWaitNanos());
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
}
