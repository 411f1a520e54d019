package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.algorithm.InFlightSlots;
import dev.sluice.store.StoreClock;
import dev.sluice.store.TimeBudget;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Work in flight on PostgreSQL ({@link PostgresRateLimiter#inFlight()}): each operation is one step of
 * {@code sluice_in_flight_step} ({@code 008_in_flight.sql}), in autocommit: it locks the key's head row, drops the
 * leases that ended, decides and writes. A key's slots are in one statement of this limiter at a time (core's
 * {@link dev.sluice.store.Batching}, as a rate-limit row is): with batching (the default) concurrent steps go many to a
 * statement ({@code sluice_in_flight_many}, {@code 009_in_flight_many.sql}, decided one by one, a key's in arrival
 * order) from a {@link Batcher} of their own; without, one statement each on a worker, a key's one after the other.
 * So the steps of one process on a hot key never wait for each other's head-row lock nor conflict with each other
 * under SERIALIZABLE or REPEATABLE READ; a step that waited for another process's fails with 40001 and is retried, as
 * every decision. Time is the database's {@code clock_timestamp()} (or the limiter's test ticker). The rows of a key
 * whose holders all died are deleted by the {@link ExpiryCleaner}. Same budget, retries and failures as the
 * limiter's decisions.
 */
final class PostgresInFlight implements InFlightLimiter {
    private final PostgresCalls calls;
    private final CallerWait waits;
    private final TimeBudget budget;
    private final StoreClock clock;
    private final InFlightStatements statements;
    /** The batches of steps; null without batching. */
    private final @Nullable Batcher<InFlightStatements.Step<?>> batcher;

    PostgresInFlight(
            PostgresCalls calls,
            CallerWait waits,
            TimeBudget budget,
            StoreClock clock,
            InFlightStatements statements,
            @Nullable Batcher<InFlightStatements.Step<?>> batcher) {
        this.calls = calls;
        this.waits = waits;
        this.budget = budget;
        this.clock = clock;
        this.statements = statements;
        this.batcher = batcher;
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
        return call(
                "a",
                key,
                holder,
                max,
                leaseNanos,
                f -> InFlightSlots.decision(f.ok(), max, f.held(), f.earliestNs(), f.latestNs(), f.nowNs()));
    }

    private PostgresCalls.Pending<Boolean> releaseCall(String key, String holder) {
        InFlightSlots.checkRelease(key, holder);
        return call("r", key, holder, 0, 0, InFlightStatements.Found::ok);
    }

    private PostgresCalls.Pending<Boolean> renewCall(String key, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkRenew(key, holder, lease);
        return call("n", key, holder, 0, leaseNanos, InFlightStatements.Found::ok);
    }

    /**
     * One step, after the input checks: in the batches, or on a worker once no other statement of this limiter is on
     * the key's slots.
     */
    private <T> PostgresCalls.Pending<T> call(
            String op, String key, String holder, long max, long leaseNanos, InFlightStatements.Reply<T> reply) {
        KeyText.check(key);
        calls.checkOpen();
        InFlightStatements.Step<T> step = new InFlightStatements.Step<>(
                op,
                key,
                holder,
                max,
                leaseNanos,
                clock.read(),
                new DecisionCall(budget.deadline()),
                reply,
                new CompletableFuture<>());
        if (batcher != null) {
            batcher.submit(step);
            return new PostgresCalls.Pending<>(step.result(), step.call(), key, null);
        }
        return calls.onRow(step.batchKey(), key, step.call(), c -> statements.one(c, step));
    }

    /** Stops the batches: what is queued fails as closed. */
    void close() {
        if (batcher != null) {
            batcher.close();
        }
    }
}
