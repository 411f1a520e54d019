package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import java.time.Duration;
import java.util.Objects;

/**
 * The pure steps behind one entry point: {@code (state, now, limit, cost) -> (decision, new state)}.
 * Stores that keep state in their own shape still decide with these formulas; the conformance suite
 * runs random sequences through a store and through these steps and requires identical decisions.
 */
public final class Algorithms {
    private Algorithms() {}

    /** The state of a key never seen (or reset). */
    public static State fresh(Limit limit) {
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> TatState.FRESH;
            case FIXED_WINDOW -> WindowState.FRESH;
            case SLIDING_WINDOW -> SlidingWindowState.FRESH;
            case SLIDING_LOG -> LogState.FRESH;
        };
    }

    public static Step tryAcquire(State state, long nowNanos, Limit limit, long cost) {
        limit.checkCost(cost);
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET -> TokenBucket.tryAcquire((TatState) state, nowNanos, limit, cost);
            case GCRA -> Gcra.tryAcquire((TatState) state, nowNanos, limit, cost);
            case FIXED_WINDOW -> FixedWindow.tryAcquire((WindowState) state, nowNanos, limit, cost);
            case SLIDING_WINDOW -> SlidingWindow.tryAcquire((SlidingWindowState) state, nowNanos, limit, cost);
            case SLIDING_LOG -> SlidingLog.tryAcquire((LogState) state, nowNanos, limit, cost);
        };
    }

    /**
     * What {@link #tryAcquire} would decide for {@code cost}, without taking anything: allowed iff the cost
     * fits now, {@code retryAfter} as tryAcquire would say; {@code remaining} and {@code resetAfter} describe
     * the state as it is (nothing is subtracted).
     */
    public static Decision peek(State state, long nowNanos, Limit limit, long cost) {
        limit.checkCost(cost);
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> Gcra.peek((TatState) state, nowNanos, limit, cost);
            case FIXED_WINDOW -> FixedWindow.peek((WindowState) state, nowNanos, limit, cost);
            case SLIDING_WINDOW -> SlidingWindow.peek((SlidingWindowState) state, nowNanos, limit, cost);
            case SLIDING_LOG -> SlidingLog.peek((LogState) state, nowNanos, limit, cost);
        };
    }

    public static Step reserve(State state, long nowNanos, Limit limit, long cost, long maxWaitNanos) {
        checkReservable(limit);
        limit.checkCost(cost);
        return Gcra.reserve((TatState) state, nowNanos, limit, cost, maxWaitNanos);
    }

    /**
     * Validates a {@code reserve} request, as every store does before anything else: the permit
     * ({@link Permit#check}), an algorithm that can lend future permits, and a {@code maxWait} of zero or more.
     * Returns {@code maxWait} in nanoseconds, {@link Long#MAX_VALUE} for one too long to count so (292 years or
     * more: "wait as long as it takes"), which is what every store sends or computes with.
     *
     * @throws IllegalArgumentException naming the bad value and the fix
     * @throws UnsupportedOperationException for a window algorithm
     */
    public static long checkReserve(String key, Limit limit, long cost, Duration maxWait) {
        Permit.check(key, limit, cost);
        checkReservable(limit);
        Objects.requireNonNull(maxWait, "maxWait must not be null: use Duration.ZERO to not wait at all");
        if (maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait " + maxWait + " is negative: use Duration.ZERO or more");
        }
        return maxWait.compareTo(LONGEST_NANOS) >= 0 ? Long.MAX_VALUE : maxWait.toNanos();
    }

    private static final Duration LONGEST_NANOS = Duration.ofNanos(Long.MAX_VALUE);

    /** Throws {@link UnsupportedOperationException} for the window algorithms, which cannot lend from the future. */
    public static void checkReservable(Limit limit) {
        if (!limit.algorithm().isTat()) {
            throw new UnsupportedOperationException("reserve is defined for token_bucket and gcra only, not for "
                    + limit.algorithm().configName() + " (limit " + limit.describe()
                    + "): a window cannot lend permits from a future window; use tryAcquire, or a token bucket");
        }
    }
}
