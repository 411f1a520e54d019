package dev.sluice.postgres;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Scheduler;
import dev.sluice.store.TimeBudget;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * How long a caller waits for its decision's worker, and what it is told when it stops: the budget
 * ({@link TimeBudget}: a stall of this process extends it once), and the database's patience on top. Queued (for
 * a worker, a pooled connection or a batch), a decision keeps waiting while the database keeps answering others;
 * sent, it keeps waiting for its statement, up to {@value AttemptLoop#SENT_PATIENCE} budgets, while the
 * database keeps answering others (a convoy on a hot row's lock). A caller who stops waiting marks its call
 * abandoned (a call not sent yet is then never sent) and cancels a statement under way, off its own thread, until
 * it is over: the pauses between cancels are the limiter's {@link Scheduler}'s, the cancels (which block on the
 * network) run on up to two daemon threads of its factory, {@code sluice-postgres-cancel-<n>}, which end when idle.
 */
final class CallerWait {
    /** How long past the deadline a caller still waits for its worker's answer (see {@link PostgresRateLimiter#SLACK_MILLIS}). */
    static final long GRACE_MILLIS = 1;

    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS);

    private final TimeBudget budget;
    private final DatabaseHealth health;
    private final PostgresFailures failures;
    private final Scheduler scheduler;
    /**
     * Sends the cancels of statements whose callers stopped waiting; its threads end when idle. Its queue holds at
     * most one task per statement under way.
     */
    private final ThreadPoolExecutor canceller;

    CallerWait(TimeBudget budget, DatabaseHealth health, PostgresFailures failures, Scheduler scheduler) {
        this.budget = budget;
        this.health = health;
        this.failures = failures;
        this.scheduler = scheduler;
        this.canceller = new ThreadPoolExecutor(
                2, 2, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), scheduler.threadFactory("postgres-cancel"));
        canceller.allowCoreThreadTimeOut(true);
    }

    /**
     * Waits for a decision's worker until its deadline plus {@link CallerWait#GRACE_MILLIS}; then the decision fails
     * with why it did not come back (see {@link #late}). Exceptions come back as thrown, unwrapped.
     */
    <T> T await(PostgresCalls.Pending<T> p) {
        CompletableFuture<T> f = p.future();
        DecisionCall call = p.call();
        String key = p.key();
        Limit limit = p.limit();
        try {
            // expire: the worker, if it has not begun, now sends nothing
            return budget.await(f, call.deadlineNanos + GRACE_NANOS, patience(call), g -> expire(g, call, key, limit));
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new PostgresStoreException(
                    "the decision" + KeyText.about(key, limit) + " failed: " + cause,
                    null,
                    cause,
                    Degradation.STORE_ERROR);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            f.cancel(false);
            throw new PostgresStoreException(
                    "interrupted while waiting for the decision" + KeyText.about(key, limit)
                            + "; it may still be under way",
                    null,
                    e,
                    Degradation.STORE_ERROR);
        }
    }

    /**
     * The future fails with the same exception as {@link #await} at the same moment: the deadline plus
     * {@link CallerWait#GRACE_MILLIS}, whatever the decision is waiting for.
     */
    <T> CompletableFuture<T> bounded(PostgresCalls.Pending<T> p) {
        DecisionCall call = p.call();
        return budget.bound(
                p.future(), call.deadlineNanos + GRACE_NANOS, patience(call), g -> expire(g, call, p.key(), p.limit()));
    }

    /**
     * Why a caller keeps waiting past its deadline. Once its statement is sent, until the statement's own
     * deadline (it was given a whole budget when it was sent) plus the grace. Before that (waiting for a worker,
     * a pooled connection or a batch) as long as the database keeps answering: it answered a statement within
     * the last budget and none of its calls failed since. Queueing behind other decisions on a healthy database
     * is not a failure of the store; on a paused or dead one, the queued caller fails at its deadline.
     */
    private TimeBudget.Patience patience(DecisionCall call) {
        return (deadline, now) -> {
            boolean answering = health.answering(now, budget.nanos());
            if (call.phase() != DecisionCall.SENT) {
                return answering ? now + budget.nanos() : deadline;
            }
            long sentDeadline = call.deadlineNanos + GRACE_NANOS;
            if (sentDeadline - now > 0) {
                return sentDeadline; // sent late, after queueing: its own budget runs from the send
            }
            long limit = call.sentLimitNanos + GRACE_NANOS;
            return answering && limit - now > 0 ? Math.min(now + budget.nanos(), limit) : deadline;
        };
    }

    /**
     * The caller stops waiting: its future fails with why, and a statement still under way is cancelled, off the
     * caller's thread (the driver sends a cancel on a new connection and waits for it, up to its
     * {@code cancelSignalTimeout}, on a database that may be paused).
     */
    private void expire(CompletableFuture<?> f, DecisionCall call, String key, @Nullable Limit limit) {
        call.abandoned = true;
        if (f.completeExceptionally(late(call, key, limit, new TimeoutException()))
                && call.phase() == DecisionCall.SENT) {
            canceller.execute(() -> cancelUntilOver(call, FIRST_CANCEL_PAUSE_MILLIS));
        }
    }

    /** The pause before a cancel is sent again, at first; it doubles up to {@link #MAX_CANCEL_PAUSE_MILLIS}. */
    private static final long FIRST_CANCEL_PAUSE_MILLIS = 10;

    private static final long MAX_CANCEL_PAUSE_MILLIS = 1000;

    /**
     * Cancels the call's statement again and again until it is over. One cancel is not enough: the server ignores
     * one that reaches it before the statement does, and on a busy machine a worker thread or a database backend may
     * be a whole budget late. The statement would then wait for its locked row and take its permits when the lock
     * goes, its caller having been told that it was cancelled and took nothing. A statement waiting for a lock is
     * ended by the first cancel that finds it there.
     */
    private void cancelUntilOver(DecisionCall call, long pauseMillis) {
        if (call.cancel()) {
            long nextPause = Math.min(2 * pauseMillis, MAX_CANCEL_PAUSE_MILLIS);
            Scheduler.Cancellable unused = scheduler.schedule(
                    Duration.ofMillis(pauseMillis), () -> canceller.execute(() -> cancelUntilOver(call, nextPause)));
        }
    }

    /** Why a decision did not come back within its budget: where it was when the caller stopped waiting. */
    private PostgresStoreException late(DecisionCall call, String key, @Nullable Limit limit, Throwable cause) {
        long budget = this.budget.millis();
        if (call.phase() == DecisionCall.SENT) {
            health.seen(Degradation.TIMEOUT);
            String fate = call.cancelReachesStatement()
                    ? "the statement was sent and is cancelled now, so nothing was taken (unless the database committed"
                            + " it before the cancel reached it)"
                    : "the statement was sent in a batch with other callers' decisions, which still wait for it, so it"
                            + " is not cancelled and takes this decision's permits if it commits (the store's own timeout, "
                            + AttemptLoop.SENT_PATIENCE + " budgets, ends it otherwise)";
            return new PostgresStoreException(
                    "the decision" + KeyText.about(key, limit) + " got no answer within its time"
                            + " budget of " + budget + " ms while the database answered nothing else: " + fate + "; the"
                            + " database is slow, paused or the row locked by another transaction: check the database, or raise"
                            + " RetryPolicy.budget",
                    null,
                    cause,
                    Degradation.TIMEOUT);
        }
        return failures.notSent(
                "the decision" + KeyText.about(key, limit) + " waited its whole time budget of " + budget + " ms for "
                        + (call.phase() == DecisionCall.QUEUED ? "a worker thread" : "a pooled connection")
                        + ": nothing was sent",
                cause);
    }
}
