package dev.sluice.postgres;

import dev.sluice.Limit;
import dev.sluice.postgres.JdbcAttempt.SqlCall;
import dev.sluice.store.Batching;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The threads a decision's blocking JDBC work runs on, so that its caller waits at most its budget: the limiter's
 * own pool ({@code threads} threads from the limiter's {@link dev.sluice.Scheduler}'s thread factory, daemon
 * threads {@code sluice-postgres-<n>} by default, started up front, with a bounded queue) or the caller's executor. A
 * decision the queue cannot take fails at once, nothing sent; one whose caller stopped waiting before a worker took
 * it is skipped.
 *
 * <p>A row (key and limit) is in one statement at a time ({@link #submitOnRow}: core's {@link Batching} policy with
 * batches of one): a decision whose row a worker is deciding on waits until that statement is over, so the decisions
 * of this process on one hot key never wait for each other's row lock nor conflict with each other under
 * SERIALIZABLE; their conflicts come only from other processes. The same as the batches' rule, for the decisions
 * that do not batch (the window algorithms, resets, and every decision with {@code batching(false)}) and, with
 * {@code batching(false)}, for the steps of work in flight on a key's slots.
 */
final class Workers {
    private final Executor executor;
    /** The pool this limiter made, shut down with it; or null for the caller's executor. */
    private final @Nullable ExecutorService owned;

    private final int maxQueued;
    private final AttemptLoop attempts;
    private final PostgresFailures failures;
    private final BooleanSupplier closed;
    /** The decisions that wait for their row, and the rows a worker is deciding on. */
    private final Batching<OnRow<?>> rows;

    Workers(
            @Nullable Executor given,
            int size,
            int maxQueued,
            AttemptLoop attempts,
            PostgresFailures failures,
            BooleanSupplier closed,
            ThreadFactory threads) {
        this.maxQueued = maxQueued;
        this.attempts = attempts;
        this.failures = failures;
        this.closed = closed;
        if (given != null) {
            this.executor = given;
            this.owned = null;
        } else {
            // bounded: past maxQueued waiting decisions a call is rejected instead of queueing work that
            // could only run after its budget
            ThreadPoolExecutor pool = new ThreadPoolExecutor(
                    size, size, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(maxQueued), threads);
            pool.prestartAllCoreThreads(); // no caller pays for starting a thread inside its budget
            this.owned = pool;
            this.executor = pool;
        }
        // as many statements at once as workers (Batching's most, 256, with the caller's executor): past that a
        // decision queues here rather than in the executor, and maxQueued bounds both
        this.rows = new Batching<>(given != null ? 256 : Math.min(size, 256), 1, maxQueued, batch -> {
            OnRow<?> r = batch.get(0);
            return r.run(this);
        });
    }

    /**
     * A decision waiting for its row ({@link Table#row}, or a key's slots): it goes to a worker once no statement of
     * this limiter is on that row.
     */
    private record OnRow<T>(
            Object batchKey,
            String key,
            @Nullable Limit limit,
            DecisionCall call,
            SqlCall<T> work,
            CompletableFuture<T> result)
            implements Batcher.Queued {
        CompletableFuture<?> run(Workers w) {
            return w.execute(key, limit, call, work, result);
        }
    }

    /**
     * Runs {@code work} on a worker thread once no other statement of this limiter is on the row of {@code key} and
     * {@code limit} (the decisions of one row go one after the other, in arrival order); otherwise as {@link #submit}.
     */
    <T> CompletableFuture<T> submitOnRow(String key, Limit limit, DecisionCall call, SqlCall<T> work) {
        return submitOnRow(Table.row(key, limit), key, limit, call, work);
    }

    /** As {@link #submitOnRow(String, Limit, DecisionCall, SqlCall)} on the row {@code row} (a key's slots). */
    <T> CompletableFuture<T> submitOnRow(
            Object row, String key, @Nullable Limit limit, DecisionCall call, SqlCall<T> work) {
        CompletableFuture<T> f = new CompletableFuture<>();
        if (rows.submit(new OnRow<>(row, key, limit, call, work, f)) == Batching.Admission.QUEUE_FULL) {
            f.completeExceptionally(failures.notSent(
                    "the worker queue rejected the decision" + KeyText.about(key, limit) + ": its queue of " + maxQueued
                            + " waiting decisions is full, so nothing was sent",
                    null));
        }
        return f;
    }

    /**
     * Runs {@code work} on a worker thread. The returned future may be completed by the caller first (its
     * budget ran out): the worker then skips the work, or, when it had already begun, finishes it bounded
     * by the same deadline and its result goes nowhere.
     */
    <T> CompletableFuture<T> submit(String key, @Nullable Limit limit, DecisionCall call, SqlCall<T> work) {
        CompletableFuture<T> f = new CompletableFuture<>();
        CompletableFuture<?> unused = execute(key, limit, call, work, f);
        return f;
    }

    /**
     * Runs {@code work} on a worker thread, completing {@code f}; the returned future completes when the worker is
     * done with it (or it was never run), which may be after {@code f} (its caller stopped waiting).
     */
    private <T> CompletableFuture<?> execute(
            String key, @Nullable Limit limit, DecisionCall call, SqlCall<T> work, CompletableFuture<T> f) {
        CompletableFuture<@Nullable Void> over = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                try {
                    if (f.isDone()) {
                        return; // its caller stopped waiting: nothing to send
                    }
                    if (closed.getAsBoolean()) {
                        throw new IllegalStateException(PostgresRateLimiter.CLOSED);
                    }
                    f.complete(attempts.run(key, limit, call, work));
                } catch (RuntimeException | Error e) {
                    f.completeExceptionally(e);
                } finally {
                    over.complete(null);
                }
            });
        } catch (RejectedExecutionException e) {
            over.complete(null);
            if (closed.getAsBoolean()) {
                throw new IllegalStateException(
                        PostgresRateLimiter.CLOSED, e); // close() shut the executor down meanwhile
            }
            f.completeExceptionally(failures.notSent(
                    "the worker queue rejected the decision" + KeyText.about(key, limit)
                            + (owned != null
                                    ? ": its queue of " + maxQueued + " waiting decisions is full"
                                    : " (" + e.getMessage() + ")")
                            + ", so nothing was sent",
                    e));
        }
        return over;
    }

    /** Stops the pool this limiter made, letting work under way finish for up to {@code waitMillis}. */
    void close(long waitMillis) {
        rows.close(new IllegalStateException(PostgresRateLimiter.CLOSED)); // what waits for its row is never sent
        if (owned == null) {
            return;
        }
        owned.shutdown();
        try {
            if (!owned.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
                owned.shutdownNow();
            }
        } catch (InterruptedException e) {
            owned.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
