package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.Limit;

/**
 * Sliding window counter: two epoch-aligned fixed windows, the previous one weighted by how much of it
 * the trailing window still covers. With {@code k = floor(t/W)} and {@code e = t − k·W}:
 * <pre>
 *   estimate = prev·(W − e)/W + curr            allowed iff estimate + q ≤ C
 * </pre>
 * compared exactly as {@code prev·(W − e) ≤ (C − curr − q)·W} in 128 bits — no floating point.
 * <ul>
 *   <li>{@code remaining = C − curr' − ceil(prev·(W − e)/W)}, floored at zero;</li>
 *   <li>{@code retryAfter} is computed, not guessed: within this window the weighted term shrinks until
 *       {@code e' = W − floor((C − curr − q)·W / prev)}; failing that, in the next window (where the
 *       current count becomes the previous) at {@code e'' = max(0, W − floor((C − q)·W / curr))};</li>
 *   <li>{@code resetAfter} = until both windows are empty: {@code (k+2)·W − t} while the current window
 *       holds anything, {@code (k+1)·W − t} while only the previous does.</li>
 * </ul>
 */
public final class SlidingWindow {
    private SlidingWindow() {}

    /** The pure step for {@code peek}: what {@code tryAcquire} would decide, taking nothing; remaining and reset as now. */
    public static Decision peek(SlidingWindowState state, long nowNanos, Limit limit, long cost) {
        Step step = tryAcquire(state, nowNanos, limit, cost);
        if (!step.decision().allowed()) {
            return step.decision();
        }
        long w = limit.periodNanos();
        long k = Math.floorDiv(nowNanos, w);
        SlidingWindowState now = (SlidingWindowState) step.state();
        long curr = now.current() - cost;
        long remaining =
                Math.max(0, limit.capacity() - curr - Exact.mulDivCeil(now.previous(), w - (nowNanos - k * w), w));
        return new Decision(true, limit.capacity(), remaining, 0, resetAfter(now.previous(), curr, k, w, nowNanos));
    }

    public static Step tryAcquire(SlidingWindowState state, long nowNanos, Limit limit, long cost) {
        long w = limit.periodNanos();
        long c = limit.capacity();
        long k = Math.floorDiv(nowNanos, w);
        long e = nowNanos - k * w;
        long prev = previousAt(state, k);
        long curr = currentAt(state, k);
        long room = c - curr - cost;
        if (room >= 0 && Exact.productLessOrEqual(prev, w - e, room, w)) {
            long after = curr + cost;
            long remaining = Math.max(0, c - after - Exact.mulDivCeil(prev, w - e, w));
            return new Step(
                    new Decision(true, c, remaining, 0, resetAfter(prev, after, k, w, nowNanos)),
                    new SlidingWindowState(k, prev, after));
        }
        long remaining = Math.max(0, c - curr - Exact.mulDivCeil(prev, w - e, w));
        return new Step(
                new Decision(
                        false,
                        c,
                        remaining,
                        retryAfter(prev, curr, cost, c, k, w, e, nowNanos),
                        resetAfter(prev, curr, k, w, nowNanos)),
                state);
    }

    /** The count of the window before window {@code k}, as the state tells it (0 when older). */
    static long previousAt(SlidingWindowState state, long k) {
        return state.window() == k ? state.previous() : state.window() == k - 1 ? state.current() : 0;
    }

    /** The count of window {@code k}, as the state tells it. */
    static long currentAt(SlidingWindowState state, long k) {
        return state.window() == k ? state.current() : 0;
    }

    private static long resetAfter(long prev, long curr, long k, long w, long now) {
        if (curr > 0) {
            return (k + 2) * w - now;
        }
        return prev > 0 ? (k + 1) * w - now : 0;
    }

    private static long retryAfter(long prev, long curr, long cost, long c, long k, long w, long e, long now) {
        long room = c - curr - cost;
        if (room >= 0 && prev > 0) {
            // denied means room·W < prev·(W − e), so room < prev and the quotient is < W − e
            long eAllowed = w - Exact.mulDivFloor(room, w, prev);
            if (eAllowed < w) {
                return eAllowed - e;
            }
        }
        long eNext = 0;
        if (curr > c - cost) {
            eNext = w - Exact.mulDivFloor(c - cost, w, curr);
        }
        return (k + 1) * w + eNext - now;
    }
}
