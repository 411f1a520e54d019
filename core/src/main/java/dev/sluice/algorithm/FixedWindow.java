package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.Limit;

/**
 * Fixed window: time is cut into windows of length {@code W} aligned to the Unix epoch; window
 * {@code k = floor(t / W)} admits while {@code count_k + q ≤ C}.
 * <pre>
 *   remaining  = C − count'            resetAfter = (k+1)·W − t   (when the window holds anything)
 *   retryAfter = resetAfter when denied: the next window starts empty
 * </pre>
 * Cheapest of all and what envoy's ratelimit does; allows up to {@code 2C} across a window boundary.
 */
public final class FixedWindow {
    private FixedWindow() {}

    /** The window number of {@code nowNanos}. */
    public static long windowOf(long nowNanos, Limit limit) {
        return Math.floorDiv(nowNanos, limit.periodNanos());
    }

    /** Nanoseconds from {@code nowNanos} to the end of its window. */
    public static long untilWindowEnd(long nowNanos, Limit limit) {
        long w = limit.periodNanos();
        return w - Math.floorMod(nowNanos, w);
    }

    public static Step tryAcquire(WindowState state, long nowNanos, Limit limit, long cost) {
        long k = windowOf(nowNanos, limit);
        long count = state.window() == k ? state.count() : 0;
        if (count + cost <= limit.capacity()) {
            return new Step(allowed(count + cost, nowNanos, limit), new WindowState(k, count + cost));
        }
        return new Step(denied(count, nowNanos, limit), state);
    }

    /** The pure step for {@code peek}: what {@code tryAcquire} would decide, taking nothing; remaining and reset as now. */
    public static Decision peek(WindowState state, long nowNanos, Limit limit, long cost) {
        long count = state.window() == windowOf(nowNanos, limit) ? state.count() : 0;
        if (count + cost <= limit.capacity()) {
            return new Decision(
                    true,
                    limit.capacity(),
                    limit.capacity() - count,
                    0,
                    count > 0 ? untilWindowEnd(nowNanos, limit) : 0);
        }
        return denied(count, nowNanos, limit);
    }

    /** The decision for an allowed call that left {@code countAfter} in the current window. */
    public static Decision allowed(long countAfter, long nowNanos, Limit limit) {
        return new Decision(true, limit.capacity(), limit.capacity() - countAfter, 0, untilWindowEnd(nowNanos, limit));
    }

    /**
     * The decision for a denied call in a window holding {@code count}: retry when the next window opens. The count
     * may exceed the capacity when it was counted under larger numbers ({@link Inheritance}): none remain then.
     */
    public static Decision denied(long count, long nowNanos, Limit limit) {
        long untilEnd = untilWindowEnd(nowNanos, limit);
        return new Decision(false, limit.capacity(), Math.max(0, limit.capacity() - count), untilEnd, untilEnd);
    }
}
