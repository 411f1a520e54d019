package dev.sluice.postgres;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.postgres.JdbcAttempt.SqlCall;
import dev.sluice.store.TimeBudget;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A decision's attempts, on the worker thread: borrow a connection, send nothing for a caller who gave up, give the
 * statement its budget from the moment it is sent (and the server's cancel at {@value
 * #SENT_PATIENCE} budgets), retry 40001/40P01 under the {@link RetryPolicy} and a broken
 * connection at once on another, and say why when it gives up. Counts decisions, retries and exhausted retries.
 */
final class AttemptLoop {
    /** How many budgets a sent statement may wait while the database answers others: its query timeout. */
    static final int SENT_PATIENCE = 10;

    private final DataSource dataSource;
    private final RetryPolicy retryPolicy;
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
            PostgresFailures failures) {
        this.dataSource = dataSource;
        this.retryPolicy = retryPolicy;
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
     * Runs {@code work} on a fresh connection, retrying 40001/40P01 under the policy until the call's
     * deadline (System.nanoTime), on the calling (worker) thread; nothing is sent once the deadline has passed.
     */
    <T> T run(@Nullable String key, @Nullable Limit limit, DecisionCall call, SqlCall<T> work) {
        return run(key, limit, call, budget.nanos(), work);
    }

    <T> T run(@Nullable String key, @Nullable Limit limit, DecisionCall call, long budgetNanos, SqlCall<T> work) {
        // a decision that waited in a queue was waited for (the caller's patience): its attempts get the whole
        // budget from here; the caller stops waiting, and this sends nothing, when the database stops answering
        long start = System.nanoTime();
        long deadline = start + budgetNanos;
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
                    long backoff = retryPolicy.backoffNanos(attempt);
                    if (attempt < retryPolicy.maxAttempts() && elapsed + backoff < budgetNanos) {
                        retries.increment();
                        sleep(backoff);
                        continue;
                    }
                    retriesExhausted.increment();
                    boolean outOfTime = attempt < retryPolicy.maxAttempts();
                    throw new PostgresStoreException(
                            "gave up after " + attempt + " attempt(s) in "
                                    + TimeUnit.NANOSECONDS.toMillis(elapsed) + " ms on conflicts (SQLSTATE " + state
                                    + ": "
                                    + e.getMessage() + ")" + KeyText.about(key, limit) + ": the retry policy "
                                    + retryPolicy
                                    + " ran out of " + (outOfTime ? "time" : "attempts")
                                    + "; raise maxAttempts or the budget,"
                                    + " or spread the load over more keys",
                            state,
                            e,
                            outOfTime ? Degradation.TIMEOUT : Degradation.STORE_ERROR);
                }
                PostgresStoreException x = failures.translate(e, state, elapsed, key, limit);
                if (x.degradation() == Degradation.UNAVAILABLE
                        && attempt < retryPolicy.maxAttempts()
                        && deadline - System.nanoTime() > 0) {
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

    private static void sleep(long nanos) {
        if (nanos <= 0) {
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PostgresStoreException(
                    "interrupted while backing off before a retry", null, e, Degradation.STORE_ERROR);
        }
    }
}
