package dev.sluice.postgres;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Scheduler;
import dev.sluice.Ticker;
import dev.sluice.postgres.JdbcAttempt.SqlCall;
import dev.sluice.store.TimeBudget;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A decision's attempts, on the worker thread: borrow a connection, send nothing for a caller who gave up, give the
 * statement its budget from the moment it is sent (and the server's cancel at {@value
 * #SENT_PATIENCE} budgets), retry 40001/40P01 with the {@link RetryPolicy}'s jittered backoff until a budget from the
 * first attempt's send has passed (however many attempts that takes; the backoff waits on the limiter's
 * {@link Scheduler}, whose ticker measures that budget, so a test drives it), a broken connection at once on another
 * while the deadline lasts, and say why when it gives up. Counts decisions, retries and exhausted retries.
 */
final class AttemptLoop {
    /** How many budgets a sent statement may wait while the database answers others: its query timeout. */
    static final int SENT_PATIENCE = 10;

    /** No attempt sent yet: the conflicts' budget has not begun. */
    private static final long NOT_SENT = Long.MIN_VALUE;

    private final DataSource dataSource;
    private final RetryPolicy retryPolicy;
    private final Scheduler scheduler;
    private final Ticker ticker;
    private final TimeBudget budget;
    private final DatabaseHealth health;
    private final PostgresFailures failures;
    final LongAdder decisions = new LongAdder();
    final LongAdder retries = new LongAdder();
    final LongAdder retriesExhausted = new LongAdder();

    AttemptLoop(
            DataSource dataSource,
            RetryPolicy retryPolicy,
            TimeBudget budget,
            DatabaseHealth health,
            PostgresFailures failures,
            Scheduler scheduler) {
        this.dataSource = dataSource;
        this.retryPolicy = retryPolicy;
        this.scheduler = scheduler;
        this.ticker = scheduler.ticker();
        this.budget = budget;
        this.health = health;
        this.failures = failures;
    }

    /** Zeroes the counters: what ran before (the limiter's warm-up) was no caller's decision. */
    void forget() {
        decisions.reset();
        retries.reset();
        retriesExhausted.reset();
    }

    /**
     * Runs {@code work} on a fresh connection, retrying 40001/40P01 until a budget has passed since the first attempt
     * was sent, on the calling (worker) thread; nothing is sent once the deadline has passed.
     */
    <T> T run(@Nullable String key, @Nullable Limit limit, DecisionCall call, SqlCall<T> work) {
        return run(key, limit, call, budget.nanos(), work);
    }

    <T> T run(@Nullable String key, @Nullable Limit limit, DecisionCall call, long budgetNanos, SqlCall<T> work) {
        // a decision that waited in a queue was waited for (the caller's patience): its attempts get the whole
        // budget from here; the caller stops waiting, and this sends nothing, when the database stops answering
        long start = System.nanoTime();
        long deadline = start + budgetNanos;
        long retriesStart = NOT_SENT; // the scheduler's ticker when the first attempt was sent
        long retryUntil = NOT_SENT; // conflicts are retried until then: a budget from the first attempt's send
        int attempt = 0;
        while (true) {
            attempt++;
            call.enter(DecisionCall.CONNECTING);
            Connection c;
            try {
                c = dataSource.getConnection();
            } catch (SQLException e) {
                throw failures.connectionFailure(e);
            }
            try (c) {
                long sentAt = System.nanoTime();
                if (attempt == 1) {
                    deadline = Math.max(deadline, sentAt + budgetNanos); // the wait for a connection was queueing
                    retriesStart = ticker.read();
                }
                long left = deadline - sentAt;
                if (left <= 0) {
                    throw failures.notSent(
                            "waited " + TimeUnit.NANOSECONDS.toMillis(sentAt - start)
                                    + " ms for a pooled connection" + KeyText.about(key, limit)
                                    + ", past the time budget of "
                                    + TimeUnit.NANOSECONDS.toMillis(budgetNanos) + " ms: nothing was sent",
                            null);
                }
                if (call.allAbandoned()) {
                    throw failures.notSent(
                            "the caller stopped waiting" + KeyText.about(key, limit) + " before a connection was free:"
                                    + " nothing was sent",
                            null);
                }
                call.sent(deadline);
                // the server cancels the statement at its limit, SENT_PATIENCE budgets; the caller stops waiting
                // (and cancels it) sooner unless the database keeps answering others (a lock convoy on a hot row)
                long cancelAt = sentAt + budgetNanos * SENT_PATIENCE;
                call.sentLimit(cancelAt);
                T result = JdbcAttempt.attempt(
                        c, cancelAt, Math.max(1, TimeUnit.NANOSECONDS.toMillis(cancelAt - sentAt)), call, work);
                health.answered();
                if (!call.maintenance) {
                    decisions.increment();
                }
                return result;
            } catch (SQLException e) {
                String state = PostgresFailures.sqlState(e);
                long elapsed = System.nanoTime() - start;
                if (RetryPolicy.isRetryable(state)) {
                    health.answered(); // a conflict is an answer: the database is up, and busy on this row
                    if (retryUntil == NOT_SENT) {
                        retryUntil = retriesStart + budgetNanos;
                    }
                    // contention is the database answering: retried for as long as the budget lasts, however many
                    // attempts that takes; only when it outlasts the budget does the decision fail
                    long left = retryUntil - ticker.read();
                    if (left > 0) {
                        backOff(retryPolicy.backoffNanos(attempt, left));
                        left = retryUntil - ticker.read();
                    }
                    if (left > 0) {
                        if (call.allAbandoned()) {
                            throw failures.notSent(
                                    "the caller stopped waiting" + KeyText.about(key, limit) + " while its decision"
                                            + " was retried after a conflict (SQLSTATE " + state + "): nothing was"
                                            + " taken",
                                    e);
                        }
                        retries.increment();
                        continue;
                    }
                    retriesExhausted.increment();
                    throw new PostgresStoreException(
                            "gave up after " + attempt + " attempt(s) in "
                                    + TimeUnit.NANOSECONDS.toMillis(elapsed) + " ms on conflicts (SQLSTATE " + state
                                    + ": " + e.getMessage() + ")" + KeyText.about(key, limit)
                                    + ": they outlasted the time budget of "
                                    + TimeUnit.NANOSECONDS.toMillis(budgetNanos) + " ms; nothing was taken. Raise"
                                    + " RetryPolicy.budget, or spread the load over more keys",
                            state,
                            e,
                            Degradation.TIMEOUT);
                }
                PostgresStoreException x = failures.translate(e, state, elapsed, key, limit);
                if (x.degradation() == Degradation.UNAVAILABLE && deadline - System.nanoTime() > 0) {
                    // a broken connection, most often one the pool kept from before a restart: try another
                    // at once, so that after a restart the stale ones are weeded out within one decision
                    // instead of failing one decision each
                    retries.increment();
                    continue;
                }
                if (x.degradation().storeUnhealthy()) {
                    health.seen(x.degradation());
                }
                throw x;
            }
        }
    }

    /**
     * Waits {@code nanos} before the next attempt, through the scheduler (its timer completes the wait; a test's
     * {@code ManualScheduler} when it advances). An interrupted wait fails the decision, nothing taken.
     */
    private void backOff(long nanos) {
        CompletableFuture<@Nullable Void> woken = new CompletableFuture<>();
        Scheduler.Cancellable timer = scheduler.schedule(Duration.ofNanos(nanos), () -> woken.complete(null));
        try {
            woken.get();
        } catch (InterruptedException e) {
            timer.cancel();
            Thread.currentThread().interrupt();
            throw new PostgresStoreException(
                    "interrupted while backing off before a retry; nothing was taken",
                    null,
                    e,
                    Degradation.STORE_ERROR);
        } catch (ExecutionException e) {
            throw new IllegalStateException("a backoff's timer cannot fail", e);
        }
    }
}
