package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.store.StoreClock;
import dev.sluice.store.TimeBudget;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The operations of a {@link PostgresRateLimiter}, one per kind of decision, each written once: checks the input
 * (before anything is sent or changed), takes the call's deadline from the budget (queueing included) and hands the
 * work to the batches or a worker, returning a {@link Pending} call. A decision or reset that does not batch goes to a
 * worker once no other statement of this limiter is on its row ({@link Workers#submitOnRow}); a peek (it locks and
 * writes nothing) goes at once; multi-permit requests (several rows, locked in one fixed order) share transactions in
 * a batcher of their own. The limiter's two views use them: the synchronous one waits for it
 * ({@link CallerWait#await}), the asynchronous one gets its future bounded alike ({@link CallerWait#bounded}).
 */
final class PostgresCalls {

    /**
     * A call under way: its future (not yet bounded by its deadline) and what its failures name (no limit for work in
     * flight).
     */
    record Pending<T>(
            CompletableFuture<T> future,
            DecisionCall call,
            String key,
            @Nullable Limit limit) {}

    private final @Nullable Batcher<Batcher.Request> batcher;
    private final Workers workers;
    private final DecisionStatements statements;
    private final MultiPermitTransaction multiPermit;
    private final @Nullable Batcher<MultiPermitTransaction.Request> multiBatcher;
    private final SettleStatements settles;
    private final StoreClock clock;
    private final TimeBudget budget;
    private final BooleanSupplier closed;

    /**
     * The calls of a limiter built with {@code b}: its batches (of token-bucket and GCRA decisions, and of multi-permit
     * requests; none without batching) sent through {@code attempts}, and its workers.
     */
    PostgresCalls(
            PostgresOptions<?> b,
            Sql sql,
            AttemptLoop attempts,
            PostgresFailures failures,
            Workers workers,
            DecisionStatements statements,
            SettleStatements settles,
            TimeBudget budget,
            BooleanSupplier closed) {
        this.batcher =
                Batcher.of(b, BatchSend.buckets(attempts, statements, settles), failures::notSent, "postgres-batch");
        this.multiPermit = new MultiPermitTransaction(sql, b.clock);
        this.multiBatcher =
                Batcher.of(b, new BatchSend<>(attempts, multiPermit::acquireEach), failures::notSent, "postgres-multi");
        this.workers = workers;
        this.statements = statements;
        this.settles = settles;
        this.clock = b.clock;
        this.budget = budget;
        this.closed = closed;
    }

    Pending<Decision> tryAcquire(String key, Limit limit, long cost) {
        check(key, limit, cost);
        return acquire(key, limit, cost, -1);
    }

    Pending<Decision> reserve(String key, Limit limit, long cost, Duration maxWait) {
        long maxWaitNanos = Algorithms.checkReserve(key, limit, cost, maxWait);
        check(key, limit, cost);
        return acquire(key, limit, cost, maxWaitNanos);
    }

    /**
     * A tryAcquire ({@code maxWaitNanos < 0}) or a reserve: with batching, a token-bucket or GCRA decision joins the
     * batches (the batch completes it); else it is its own statement on a worker.
     */
    private Pending<Decision> acquire(String key, Limit limit, long cost, long maxWaitNanos) {
        DecisionCall call = new DecisionCall(budget.deadline()); // the budget starts now, queue included
        if (batcher != null && limit.algorithm().isTat()) {
            CompletableFuture<Decision> f = new CompletableFuture<>();
            batcher.submit(new Batcher.Request(key, limit, cost, maxWaitNanos, clock.read(), call, f));
            return new Pending<>(f, call, key, limit);
        }
        return onRow(key, limit, call, c -> statements.acquire(c, key, limit, cost, maxWaitNanos, clock.read()));
    }

    /**
     * {@code tryAcquireEstimate}: one statement (the decision and the pending reservation, or neither), in the batches
     * for a token bucket or GCRA as a decision, else on a worker; a reservation id already pending comes back as
     * SQLSTATE SL001, thrown as the {@link IllegalArgumentException} it is.
     */
    Pending<Decision> tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration within) {
        Settlement.checkId("reservation", id);
        Settlement.checkWithin("settleWithin", within);
        check(key, limit, estimate);
        long withinNanos = within.toNanos();
        DecisionCall call = new DecisionCall(budget.deadline());
        if (batcher != null && limit.algorithm().isTat()) {
            return batched(key, limit, estimate, call, new Batcher.Reservation(id, withinNanos, false));
        }
        return onRow(key, limit, call, c -> {
            Object answer =
                    SettleStatements.estimate(c, statements, key, limit, estimate, id, withinNanos, clock.read());
            if (answer instanceof IllegalArgumentException alreadyPending) {
                throw alreadyPending;
            }
            return (Decision) answer;
        });
    }

    /** {@code settle}: one statement ({@link SettleStatements}), batched as {@link #tryAcquireEstimate}. */
    Pending<Settlement> settle(String key, Limit limit, String id, long actual) {
        Permit.checkKey(key);
        Objects.requireNonNull(limit, "limit must not be null: the limit the reservation was taken under");
        Settlement.checkId("reservation", id);
        Settlement.checkActual(limit, actual);
        KeyText.check(key);
        checkOpen();
        DecisionCall call = new DecisionCall(budget.deadline());
        if (batcher != null && limit.algorithm().isTat()) {
            return batched(key, limit, actual, call, new Batcher.Reservation(id, 0, true));
        }
        return onRow(key, limit, call, c -> settles.settle(c, key, limit, id, actual, clock.read()));
    }

    /** A token-bucket or GCRA estimate or settle joins the batches, as a decision does ({@code sluice_bucket_batch}). */
    private <T> Pending<T> batched(String key, Limit limit, long cost, DecisionCall call, Batcher.Reservation r) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Objects.requireNonNull(batcher).submit(new Batcher.Request(key, limit, cost, -1, clock.read(), call, r, f));
        return new Pending<>(f, call, key, limit);
    }

    Pending<Decision> peek(String key, Limit limit, long cost) {
        check(key, limit, cost);
        return onWorker(
                key,
                limit,
                new DecisionCall(budget.deadline()),
                c -> statements.peek(c, key, limit, cost, clock.read()));
    }

    Pending<Void> reset(String key, Limit limit) {
        Permit.checkKey(key);
        Objects.requireNonNull(limit, "limit must not be null: e.g. Limit.tokenBucket(10, Rate.perSecond(1))");
        KeyText.check(key);
        checkOpen();
        return onRow(key, limit, new DecisionCall(budget.deadline()), c -> statements.reset(c, key, limit));
    }

    /**
     * All or nothing, with each permit's own decision: one transaction, shared with the concurrent multi-permit
     * requests in the batches (or on a worker without batching); a single permit is the single decision, whose denial
     * took nothing and so is its own look.
     */
    Pending<PermitDecisions> tryAcquireEach(List<Permit> permits) {
        Permit.checkAll(permits);
        for (Permit p : permits) {
            KeyText.check(p.key());
        }
        checkOpen();
        Permit first = permits.get(0);
        if (permits.size() == 1) {
            Pending<Decision> one = acquire(first.key(), first.limit(), first.cost(), -1);
            return new Pending<>(
                    one.future().thenApply(d -> new PermitDecisions(d, List.of(d))),
                    one.call(),
                    one.key(),
                    one.limit());
        }
        DecisionCall call = new DecisionCall(budget.deadline());
        if (multiBatcher != null) {
            CompletableFuture<PermitDecisions> f = new CompletableFuture<>();
            multiBatcher.submit(new MultiPermitTransaction.Request(List.copyOf(permits), call, f));
            return new Pending<>(f, call, first.key(), first.limit());
        }
        return onWorker(first.key(), first.limit(), call, c -> multiPermit.acquireAll(c, permits));
    }

    /** Lets the batches under way finish and fails what is queued in them (the limiter's close). */
    void closeBatches() {
        if (batcher != null) {
            batcher.close();
        }
        if (multiBatcher != null) {
            multiBatcher.close();
        }
    }

    /** On a worker once no other statement of this limiter is on the row (a hot key's decisions one at a time). */
    private <T> Pending<T> onRow(String key, Limit limit, DecisionCall call, JdbcAttempt.SqlCall<T> work) {
        return new Pending<>(workers.submitOnRow(key, limit, call, work), call, key, limit);
    }

    /** A step of work in flight on a worker once no other statement of this limiter is on the key's slots. */
    <T> Pending<T> onRow(Object slots, String key, DecisionCall call, JdbcAttempt.SqlCall<T> work) {
        return new Pending<>(workers.submitOnRow(slots, key, null, call, work), call, key, null);
    }

    <T> Pending<T> onWorker(String key, @Nullable Limit limit, DecisionCall call, JdbcAttempt.SqlCall<T> work) {
        return new Pending<>(workers.submit(key, limit, call, work), call, key, limit);
    }

    /** Checks a call before anything is sent: the permit, the key as PostgreSQL text, and that the limiter is open. */
    private void check(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        KeyText.check(key);
        checkOpen();
    }

    void checkOpen() {
        if (closed.getAsBoolean()) {
            throw new IllegalStateException(PostgresRateLimiter.CLOSED);
        }
    }
}
