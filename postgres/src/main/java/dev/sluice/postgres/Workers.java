package dev.sluice.postgres;

import dev.sluice.Limit;
import dev.sluice.postgres.JdbcAttempt.SqlCall;
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
 */
final class Workers {
    private final Executor executor;
    /** The pool this limiter made, shut down with it; or null for the caller's executor. */
    private final @Nullable ExecutorService owned;

    private final int maxQueued;
    private final AttemptLoop attempts;
    private final PostgresFailures failures;
    private final BooleanSupplier closed;

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
    }

    /**
     * Runs {@code work} on a worker thread. The returned future may be completed by the caller first (its
     * budget ran out): the worker then skips the work, or, when it had already begun, finishes it bounded
     * by the same deadline and its result goes nowhere.
     */
    <T> CompletableFuture<T> submit(String key, Limit limit, DecisionCall call, SqlCall<T> work) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                if (f.isDone()) {
                    return; // its caller stopped waiting: nothing to send
                }
                try {
                    if (closed.getAsBoolean()) {
                        throw new IllegalStateException(PostgresRateLimiter.CLOSED);
                    }
                    f.complete(attempts.run(key, limit, call, work));
                } catch (RuntimeException | Error e) {
                    f.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
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
        return f;
    }

    /** Stops the pool this limiter made, letting work under way finish for up to {@code waitMillis}. */
    void close(long waitMillis) {
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
