package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.algorithm.InFlightSlots;
import dev.sluice.store.StoreClock;
import dev.sluice.store.TimeBudget;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Work in flight on PostgreSQL ({@link PostgresRateLimiter#inFlight()}): each operation is one call of the function
 * {@code sluice_in_flight_step} ({@code 008_in_flight.sql}) on a worker, in autocommit: it locks the key's head row,
 * drops the leases that ended, decides and writes, so the steps on one key are serial under any isolation level
 * (under SERIALIZABLE or REPEATABLE READ a step that waited fails with 40001 and is retried, as every decision). Time
 * is the database's {@code clock_timestamp()} (or the limiter's test ticker). The rows of a key whose holders all died
 * are deleted by the {@link ExpiryCleaner}. Same budget, retries and failures as the limiter's decisions.
 */
final class PostgresInFlight implements InFlightLimiter {
    private final PostgresCalls calls;
    private final CallerWait waits;
    private final TimeBudget budget;
    private final StoreClock clock;
    private final String step;

    PostgresInFlight(PostgresCalls calls, CallerWait waits, TimeBudget budget, StoreClock clock, Sql sql) {
        this.calls = calls;
        this.waits = waits;
        this.budget = budget;
        this.clock = clock;
        this.step = sql.inFlightStep;
    }

    @Override
    public Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease) {
        return waits.await(acquireCall(key, maxInFlight, holder, lease));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, long maxInFlight, String holder, Duration lease) {
        return waits.bounded(acquireCall(key, maxInFlight, holder, lease));
    }

    @Override
    public boolean release(String key, String holder) {
        return waits.await(releaseCall(key, holder));
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
        return waits.bounded(releaseCall(key, holder));
    }

    @Override
    public boolean renew(String key, String holder, Duration lease) {
        return waits.await(renewCall(key, holder, lease));
    }

    @Override
    public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
        return waits.bounded(renewCall(key, holder, lease));
    }

    private PostgresCalls.Pending<Decision> acquireCall(String key, long max, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkAcquire(key, max, holder, lease);
        return call("a", key, holder, max, leaseNanos, rs -> {
            long held = rs.getLong(2);
            long now = rs.getLong(5);
            return InFlightSlots.decision(rs.getBoolean(1), max, held, rs.getLong(3), rs.getLong(4), now);
        });
    }

    private PostgresCalls.Pending<Boolean> releaseCall(String key, String holder) {
        InFlightSlots.checkRelease(key, holder);
        return call("r", key, holder, 0, 0, rs -> rs.getBoolean(1));
    }

    private PostgresCalls.Pending<Boolean> renewCall(String key, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkRenew(key, holder, lease);
        return call("n", key, holder, 0, leaseNanos, rs -> rs.getBoolean(1));
    }

    /** One call of the step on a worker (see {@code 008_in_flight.sql} for its parameters), after the input checks. */
    private <T> PostgresCalls.Pending<T> call(
            String op, String key, String holder, long max, long leaseNanos, Reply<T> reply) {
        KeyText.check(key);
        calls.checkOpen();
        return calls.onWorker(key, null, new DecisionCall(budget.deadline()), c -> {
            try (PreparedStatement ps = c.prepare(step)) {
                ps.setString(1, op);
                ps.setString(2, key);
                ps.setString(3, holder);
                ps.setLong(4, max);
                ps.setLong(5, leaseNanos);
                StoreClock.Reading now = clock.read();
                if (now.store()) {
                    ps.setNull(6, Types.BIGINT); // the wire form of "the database's clock"
                } else {
                    ps.setLong(6, now.clientNanos());
                }
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("the in-flight step returned no row", "XX000");
                    }
                    return reply.read(rs);
                }
            }
        });
    }

    /** What a call makes of the step's row: ok, held, earliest_ns, latest_ns, now_ns. */
    private interface Reply<T> {
        T read(ResultSet rs) throws SQLException;
    }
}
