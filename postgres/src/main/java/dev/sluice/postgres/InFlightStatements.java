package dev.sluice.postgres;

import dev.sluice.Limit;
import dev.sluice.postgres.JdbcAttempt.Db;
import dev.sluice.store.StoreClock;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The statements of work in flight: one step alone ({@code sluice_in_flight_step}, 008_in_flight.sql) or many in one
 * statement and one commit ({@code sluice_in_flight_many}, 009_in_flight_many.sql), each answering as the step alone
 * would. How a step's row becomes its caller's answer is the step's own {@link Reply}.
 */
final class InFlightStatements {

    /** What a step found and did: ok (allowed, released, renewed), held after, earliest and latest lease end, now. */
    record Found(boolean ok, long held, long earliestNs, long latestNs, long nowNs) {}

    /** What a step's caller gets from what it found: a Decision, or whether it released or renewed. */
    interface Reply<T> {
        T read(Found found);
    }

    /** A key's slots, as core's batching sees them: apart from every rate-limit row, one statement at a time. */
    private record Slots(String key) {}

    /**
     * One step: {@code op} 'a' acquire, 'r' release, 'n' renew, on {@code key} for {@code holder} (see
     * 008_in_flight.sql for {@code max} and {@code leaseNanos}), at {@code now}; answered through {@code result}.
     */
    record Step<T>(
            String op,
            String key,
            String holder,
            long max,
            long leaseNanos,
            StoreClock.Reading now,
            DecisionCall call,
            Reply<T> reply,
            CompletableFuture<T> result)
            implements Batcher.Queued {

        @Override
        public @Nullable Limit limit() {
            return null;
        }

        @Override
        public Object batchKey() {
            return new Slots(key);
        }

        /** This step's answer from what it found. */
        T answer(Found found) {
            return reply.read(found);
        }
    }

    private final Sql sql;

    InFlightStatements(Sql sql) {
        this.sql = sql;
    }

    /** One step as its own statement. */
    <T> T one(Db c, Step<T> s) throws SQLException {
        try (PreparedStatement ps = c.prepare(sql.inFlightStep)) {
            ps.setString(1, s.op());
            ps.setString(2, s.key());
            ps.setString(3, s.holder());
            ps.setLong(4, s.max());
            ps.setLong(5, s.leaseNanos());
            if (s.now().store()) {
                ps.setNull(6, Types.BIGINT); // the wire form of "the database's clock"
            } else {
                ps.setLong(6, s.now().clientNanos());
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the in-flight step returned no row", "XX000");
                }
                return s.answer(found(rs, 1));
            }
        }
    }

    /** The answers of {@code steps} in their order: one statement for a batch of several, the step's own for one. */
    List<Object> many(Db c, List<Step<?>> steps) throws SQLException {
        if (steps.size() == 1) {
            return List.of(one(c, steps.get(0)));
        }
        int n = steps.size();
        String[] ops = new String[n];
        String[] keys = new String[n];
        String[] holders = new String[n];
        Long[] maxes = new Long[n];
        Long[] leases = new Long[n];
        Long[] nows = new Long[n];
        for (int i = 0; i < n; i++) {
            Step<?> s = steps.get(i);
            ops[i] = s.op();
            keys[i] = s.key();
            holders[i] = s.holder();
            maxes[i] = s.max();
            leases[i] = s.leaseNanos();
            nows[i] = s.now().store() ? null : s.now().clientNanos(); // NULL: the database's clock
        }
        Object[] out = new Object[n];
        try (PreparedStatement ps = c.prepare(sql.inFlightMany)) {
            ps.setArray(1, c.connection().createArrayOf("text", ops));
            ps.setArray(2, c.connection().createArrayOf("text", keys));
            ps.setArray(3, c.connection().createArrayOf("text", holders));
            ps.setArray(4, c.connection().createArrayOf("bigint", maxes));
            ps.setArray(5, c.connection().createArrayOf("bigint", leases));
            ps.setArray(6, c.connection().createArrayOf("bigint", nows));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int i = rs.getInt(1) - 1;
                    out[i] = steps.get(i).answer(found(rs, 2));
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (out[i] == null) {
                throw new SQLException("the in-flight batch function returned no row for element " + (i + 1), "XX000");
            }
        }
        return List.of(out);
    }

    /** The columns ok, held, earliest_ns, latest_ns, now_ns from {@code first} on (a lease end is 0 when none). */
    private static Found found(ResultSet rs, int first) throws SQLException {
        return new Found(
                rs.getBoolean(first),
                rs.getLong(first + 1),
                rs.getLong(first + 2),
                rs.getLong(first + 3),
                rs.getLong(first + 4));
    }
}
