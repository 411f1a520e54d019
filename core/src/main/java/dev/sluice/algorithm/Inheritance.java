package dev.sluice.algorithm;

import dev.sluice.Limit;
import java.util.Arrays;

/**
 * What a key's state becomes when its limit's numbers change under the same identity ({@link Limit#identity()}: a
 * named limit whose capacity, rate or window changed). One rule for every algorithm: <b>what was spent carries
 * over</b>, read at the instant of the change and compared with the new numbers from then on. Tightening a limit
 * therefore never hands out a burst, and loosening it never takes back more than was spent. Every store reads
 * state written under other numbers through these functions (in memory), or through the same formulas in its own
 * language (Lua, SQL), and the conformance suite checks they agree.
 *
 * <ul>
 *   <li><b>Token bucket and GCRA</b> ({@code T = period/permits}, {@code C} the capacity or burst). What was spent
 *       is the backlog in permits, {@code S = (TAT − t)/T}, all of it (permits reserved ahead included); it is read
 *       at the new interval: {@code TAT' = t + S·T'}, rounded up to the unit (never early), so
 *       {@code tokens' = C' − S}: when that is negative the key waits, at the new rate, until it is not. Example:
 *       {@code tokenBucket(10, 1/s)} exhausted (S = 10), tightened to {@code tokenBucket(5, 1/2s)}: 20 s of backlog
 *       against a bucket of 10 s, so the next token comes in 12 s and the bucket is full again in 20 s; loosened
 *       instead to {@code tokenBucket(20, 2/s)}: 10 tokens now, the other 10 back within 5 s. Not capping what was
 *       spent at the new capacity is what makes a change and its reverse (a fleet midway through a rollout, half
 *       its nodes on each set of numbers) hand out nothing: S survives any sequence of changes.</li>
 *   <li><b>Fixed window</b>: the count of the current window carries into the window of the new length that holds
 *       now, and is compared with the new permits. Example: {@code fixedWindow(100, 1m)} with 80 counted, tightened
 *       to {@code fixedWindow(50, 1m)}: denied until the minute ends; loosened to 120: 40 more this minute. A new
 *       window length keeps the count until the new window ends (longer or shorter than the old one would have).</li>
 *   <li><b>Sliding window</b>: with the same window length both counts carry over unchanged. With another length
 *       the estimate at now ({@code prev·(W − e)/W + curr}, rounded up) becomes the current count of the new window
 *       that holds now, so the new estimate starts exactly as high (never lower) and then fades by the new window.
 *       Example: {@code slidingWindow(10, 1s)} estimating 7.5 at a change to {@code slidingWindow(10, 2s)}: 8
 *       counted, 2 more admitted now.</li>
 *   <li><b>Sliding log</b>: the entries still inside the old window carry over with their times; each leaves the
 *       log one new window after it was logged, or 1 µs after the change when a shorter window would have dropped it already
 *       (so that the change itself never admits more). Example: {@code slidingLog(5, 10s)} with 4 logged at t−3 s,
 *       tightened to {@code slidingLog(3, 10s)}: denied until those leave at t+7 s.</li>
 *   <li><b>Another algorithm</b> under the same name is another identity: fresh state (see {@link Limit}).</li>
 * </ul>
 */
public final class Inheritance {
    private Inheritance() {}

    /**
     * The state {@code state}, written under {@code from}, read under {@code to} at {@code nowNanos}. Equal limits, or
     * limits of two algorithms, are no change of numbers: the state as it is, or a fresh one.
     */
    public static State carryOver(State state, long nowNanos, Limit from, Limit to) {
        if (from.equals(to)) {
            return state;
        }
        if (from.algorithm() != to.algorithm()) {
            return Algorithms.fresh(to);
        }
        return switch (to.algorithm()) {
            case TOKEN_BUCKET, GCRA -> tat((TatState) state, nowNanos, from, to);
            case FIXED_WINDOW -> fixedWindow((WindowState) state, nowNanos, from, to);
            case SLIDING_WINDOW -> slidingWindow((SlidingWindowState) state, nowNanos, from, to);
            case SLIDING_LOG -> slidingLog((LogState) state, nowNanos, from, to);
        };
    }

    /** Token bucket and GCRA: see the class comment. The backlogs are in each limit's own units. */
    public static TatState tat(TatState state, long nowNanos, Limit from, Limit to) {
        long b = Gcra.backlogAt(state.backlogScaled(), state.atNanos(), nowNanos, from);
        return new TatState(b == 0 ? 0 : tatBacklog(b, from, to), nowNanos);
    }

    /**
     * The backlog under {@code to} of backlog {@code b} under {@code from}, both measured at the same instant:
     * {@code ⌈B·P'/P⌉} ({@code P}, {@code P'} the intervals in each limit's units), at most {@link Limit#MAX_SCALED}.
     */
    public static long tatBacklog(long b, Limit from, Limit to) {
        return tatBacklog(b, from.intervalScaled(), to.intervalScaled());
    }

    /**
     * {@link #tatBacklog(long, Limit, Limit)} given the two intervals ({@link Limit#intervalScaled()}), for a store
     * that knows the numbers a state was written under but not the limit (Redis keeps them beside the value).
     */
    public static long tatBacklog(long b, long p, long p2) {
        if (Exact.productLessOrEqual(b, p2, Limit.MAX_SCALED, p)) {
            return Exact.mulDivCeil(b, p2, p);
        }
        return Limit.MAX_SCALED;
    }

    /** Fixed window: the current window's count carries into the new window that holds now. */
    public static WindowState fixedWindow(WindowState state, long nowNanos, Limit from, Limit to) {
        long live = state.window() == FixedWindow.windowOf(nowNanos, from) ? state.count() : 0;
        return live == 0 ? WindowState.FRESH : new WindowState(FixedWindow.windowOf(nowNanos, to), live);
    }

    /** Sliding window: both counts when the window length stays, else the estimate at now as the new current count. */
    public static SlidingWindowState slidingWindow(SlidingWindowState state, long nowNanos, Limit from, Limit to) {
        long w = from.periodNanos();
        if (w == to.periodNanos()) {
            return state;
        }
        long k = Math.floorDiv(nowNanos, w);
        long prev = SlidingWindow.previousAt(state, k);
        long curr = SlidingWindow.currentAt(state, k);
        long estimate = curr + Exact.mulDivCeil(prev, w - (nowNanos - k * w), w);
        return estimate == 0
                ? SlidingWindowState.FRESH
                : new SlidingWindowState(Math.floorDiv(nowNanos, to.periodNanos()), 0, estimate);
    }

    /**
     * Sliding log: the entries inside the old window at now, with their times; entries that a shorter new window would
     * already have dropped are kept, merged into one entry at the new window's first microsecond ({@code now − W' +
     * 1 µs}), so that all of them count at the change and leave 1 µs after it.
     */
    public static LogState slidingLog(LogState state, long nowNanos, Limit from, Limit to) {
        long edge = nowNanos - from.periodNanos();
        long earliest = nowNanos - to.periodNanos() + MICRO;
        int n = state.size();
        long[] times = new long[n];
        long[] costs = new long[n];
        int m = 0;
        for (int i = 0; i < n; i++) {
            long time = state.time(i);
            if (time <= edge) {
                continue;
            }
            time = Math.max(time, earliest);
            if (m > 0 && times[m - 1] == time) {
                costs[m - 1] += state.cost(i);
            } else {
                times[m] = time;
                costs[m++] = state.cost(i);
            }
        }
        if (m == n && m > 0 && times[0] == state.time(0) && times[m - 1] == state.time(n - 1)) {
            return state;
        }
        return m == 0 ? LogState.FRESH : new LogState(Arrays.copyOf(times, m), Arrays.copyOf(costs, m));
    }

    /** Stores keep time to the microsecond: the step by which a sliding log entry is moved into a shorter window. */
    private static final long MICRO = 1_000;
}
