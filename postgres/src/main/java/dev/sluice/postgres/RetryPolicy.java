package dev.sluice.postgres;

import dev.sluice.store.TimeBudget;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * How a decision survives the database's conflict errors: SQLSTATE {@code 40001} (serialization failure,
 * raised under SERIALIZABLE and by YugabyteDB's optimistic concurrency) and {@code 40P01} (deadlock) are
 * retried inside the library, however many attempts that takes, after a backoff drawn uniformly from
 * {@code [0, min(maxBackoff, initialBackoff·2^(attempt−1))]} ("full jitter", so that the threads that collided do not
 * collide again in step), for as long as a statement waiting for a locked row would wait: {@value
 * AttemptLoop#SENT_PATIENCE} budgets from the first attempt's send (each conflict is the database answering: another
 * transaction got through). Contention on a healthy database is not a failure: it costs time, and only when it
 * outlasts that does the decision fail ({@code TIMEOUT}); three processes on one hot row of a busy 2-core machine were
 * seen to need more than 250 ms of it. A count of attempts is no bound worth having: how many a hot key needs depends on how many
 * processes share it and how fast the machine is, not on whether the database is healthy (8 threads on one key on a
 * busy machine ran out of 16 attempts in 137 ms of a 250 ms budget, the default then).
 *
 * <h2>What the budget bounds</h2>
 * The budget catches a dead database, it does not fail a busy one. A decision's statement is sent with the whole
 * budget ahead of it: the server cancels it when that runs out (SQLSTATE 57014, rolled back: nothing taken), the
 * caller stops waiting then ({@value CallerWait#GRACE_MILLIS} ms later, for the cancel's answer) and the
 * connection's network timeout, {@value JdbcAttempt#NETWORK_MARGIN_MILLIS} ms later still, frees a worker
 * stuck on a database that stopped answering. Before it is sent, a decision may wait for a worker, a pooled
 * connection or a batch: that is queueing, and the caller keeps waiting as long as the database keeps answering
 * other decisions (it answered within the last budget, and nothing failed since); when it does not, the queued
 * decision fails at its budget without being sent ({@code OVERLOADED}, or the database's own trouble when it was
 * last seen failing). Conflict retries are counted from the first attempt's send, as above.
 *
 * <p>The default, 1 s ({@link TimeBudget#DEFAULT}: why), sits far above a healthy database's p99.9 under load,
 * measured with {@code HealthyUnderLoad} on a busy 2-core machine (bench/README.md, "Healthy stores under load"); an
 * outage costs a request at most that before the circuit opens. Across a region, raise it.
 *
 * <p>Each attempt is one statement in autocommit (or, for multi-permit requests, one transaction): a
 * failed attempt has committed nothing, so retrying it cannot take permits twice. Autocommit is switched
 * on for the attempt if the pool handed the connection out with it off, and restored afterwards.
 *
 * @param initialBackoff the largest backoff before the second attempt; doubles per attempt
 * @param maxBackoff     the cap of the doubling
 * @param budget         the time a decision may take, queueing and retries included (see above for what
 *                       bounds it and what does not)
 */
public record RetryPolicy(Duration initialBackoff, Duration maxBackoff, Duration budget) {

    /** Backoff from 1 ms doubling to at most 10 ms, a budget of {@link TimeBudget#DEFAULT} (1 s) a decision. */
    public static final RetryPolicy DEFAULT =
            new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(10), TimeBudget.DEFAULT);

    public RetryPolicy {
        Objects.requireNonNull(initialBackoff, "initialBackoff must not be null: e.g. Duration.ofMillis(1)");
        Objects.requireNonNull(maxBackoff, "maxBackoff must not be null: e.g. Duration.ofMillis(10)");
        Objects.requireNonNull(budget, "budget must not be null: e.g. Duration.ofSeconds(1)");
        if (initialBackoff.isNegative() || maxBackoff.isNegative()) {
            throw new IllegalArgumentException(
                    "backoffs " + initialBackoff + " and " + maxBackoff + " must not be negative");
        }
        TimeBudget.of("budget", budget); // 1 ms to 1 hour
    }

    /** The same policy with another budget. */
    public RetryPolicy withBudget(Duration decisionBudget) {
        return new RetryPolicy(initialBackoff, maxBackoff, decisionBudget);
    }

    /** True for the SQLSTATEs worth another attempt: 40001 serialization failure, 40P01 deadlock detected. */
    public static boolean isRetryable(@Nullable String sqlState) {
        return "40001".equals(sqlState) || "40P01".equals(sqlState);
    }

    /**
     * The jittered backoff in nanoseconds before attempt {@code attempt + 1} (attempt counts from 1), drawn below
     * {@code leftNanos} (the budget left) so that the next attempt starts before the budget's end.
     */
    long backoffNanos(int attempt, long leftNanos) {
        long base = initialBackoff.toNanos();
        long cap = maxBackoff.toNanos();
        long ceiling = attempt >= 40 ? cap : Math.min(cap, base << Math.min(attempt - 1, 30));
        ceiling = Math.min(ceiling, leftNanos - 1);
        return ceiling <= 0 ? 0 : ThreadLocalRandom.current().nextLong(ceiling + 1);
    }
}
