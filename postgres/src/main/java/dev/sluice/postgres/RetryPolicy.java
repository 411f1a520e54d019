package dev.sluice.postgres;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a decision survives the database's conflict errors: SQLSTATE {@code 40001} (serialization failure,
 * raised under SERIALIZABLE and by YugabyteDB's optimistic concurrency) and {@code 40P01} (deadlock) are
 * retried inside the library, at most {@code maxAttempts} times in all, after a backoff drawn uniformly
 * from {@code [0, min(maxBackoff, initialBackoff·2^(attempt−1))]} ("full jitter", so that the threads
 * that collided do not collide again in step), and never past the decision's {@code budget}.
 *
 * <h2>What the budget bounds</h2>
 * A decision's deadline is the moment it was asked for plus the budget. The JDBC work runs on the
 * limiter's worker threads and the caller waits for it until that deadline plus
 * {@value PostgresRateLimiter#SLACK_MILLIS} ms at most, whatever holds the work up: a queue, the wait for a
 * pooled connection (which the DataSource API cannot interrupt, and which HikariCP cannot bound below
 * 250 ms), a database that stopped answering, retries. Then it fails with a {@link PostgresStoreException}
 * saying whether the statement was sent ({@code TIMEOUT}) or not ({@code OVERLOADED}, or the database's
 * own trouble when it was last seen down). The worker, meanwhile:
 * <ul>
 * <li>sends nothing past the deadline: a decision that got its connection, or left a queue, after it
 *     fails without sending anything, and no retry or backoff starts past it;</li>
 * <li>runs every statement with the time left as its query timeout, to the millisecond with the
 *     PostgreSQL driver (whole seconds, rounded up, with another driver or a wrapper that hides the
 *     driver's statement): when it passes, the server cancels the statement (SQLSTATE 57014) and rolls it
 *     back, so nothing was taken;</li>
 * <li>sets the connection's network timeout to the time left plus
 *     {@value PostgresRateLimiter#NETWORK_MARGIN_MILLIS} ms: it only frees a worker stuck on a database
 *     that stopped answering, and then, as with any broken connection, a commit already sent may or may
 *     not have happened.</li>
 * </ul>
 * The default, 25 ms, is about five times the mean decision (synchronous commit included) measured on a
 * loaded 2-core machine (bench/README.md), room for a slow fsync and a few conflict retries, while an
 * outage costs a request little. Across a region, or with a busy disk, raise it.
 *
 * <p>Each attempt is one statement in autocommit (or, for multi-permit requests, one transaction): a
 * failed attempt has committed nothing, so retrying it cannot take permits twice. Autocommit is switched
 * on for the attempt if the pool handed the connection out with it off, and restored afterwards.
 *
 * @param maxAttempts    attempts in all, at least 1 (1 = no retry)
 * @param initialBackoff the largest backoff before the second attempt; doubles per attempt
 * @param maxBackoff     the cap of the doubling
 * @param budget         the time a decision may take, queueing and retries included (see above for what
 *                       bounds it and what does not)
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, Duration budget) {

    /** 16 attempts, backoff from 1 ms doubling to at most 10 ms, within 25 ms a decision. */
    public static final RetryPolicy DEFAULT = new RetryPolicy(16, Duration.ofMillis(1), Duration.ofMillis(10),
            Duration.ofMillis(25));

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts " + maxAttempts + " must be at least 1 (1 means no retry)");
        }
        Objects.requireNonNull(initialBackoff, "initialBackoff must not be null: e.g. Duration.ofMillis(1)");
        Objects.requireNonNull(maxBackoff, "maxBackoff must not be null: e.g. Duration.ofMillis(50)");
        Objects.requireNonNull(budget, "budget must not be null: e.g. Duration.ofMillis(25)");
        if (initialBackoff.isNegative() || maxBackoff.isNegative()) {
            throw new IllegalArgumentException("backoffs " + initialBackoff + " and " + maxBackoff
                    + " must not be negative");
        }
        if (budget.toMillis() < 1) {
            throw new IllegalArgumentException("budget " + budget + " is shorter than 1 ms: give a decision time,"
                    + " e.g. Duration.ofMillis(25)");
        }
    }

    /** No retries: the first 40001 reaches the caller (as a {@link PostgresStoreException}). */
    public static RetryPolicy none(Duration budget) {
        return new RetryPolicy(1, Duration.ZERO, Duration.ZERO, budget);
    }

    /** The same policy with another number of attempts. */
    public RetryPolicy withMaxAttempts(int attempts) {
        return new RetryPolicy(attempts, initialBackoff, maxBackoff, budget);
    }

    /** The same policy with another budget. */
    public RetryPolicy withBudget(Duration decisionBudget) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, decisionBudget);
    }

    /** True for the SQLSTATEs worth another attempt: 40001 serialization failure, 40P01 deadlock detected. */
    public static boolean isRetryable(String sqlState) {
        return "40001".equals(sqlState) || "40P01".equals(sqlState);
    }

    /** The jittered backoff in nanoseconds before attempt {@code attempt + 1} (attempt counts from 1). */
    long backoffNanos(int attempt) {
        long base = initialBackoff.toNanos();
        long cap = maxBackoff.toNanos();
        long ceiling = attempt >= 40 ? cap : Math.min(cap, base << Math.min(attempt - 1, 30));
        return ceiling <= 0 ? 0 : ThreadLocalRandom.current().nextLong(ceiling + 1);
    }
}
