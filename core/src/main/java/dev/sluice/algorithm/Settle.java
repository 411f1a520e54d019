package dev.sluice.algorithm;

import dev.sluice.Limit;
import dev.sluice.Settlement;
import java.util.Arrays;

/**
 * The pure step of {@code settle}: a reservation of {@code estimate} permits made at {@code reservedAt} by {@code
 * tryAcquireEstimate} (exactly a {@code tryAcquire} of the estimate) is settled at {@code now} on the {@code actual}
 * cost, applying {@code d = actual − estimate} to the key's state as each algorithm defines (see {@code
 * RateLimiter#settle}). Every store settles with these formulas, or with its own code that the conformance suite
 * compares with them:
 *
 * <ul>
 *   <li>token bucket, GCRA ({@link TatState}, {@code B} the backlog at now, {@code P} the emission interval): {@code d
 *       > 0}: {@code B' = B + d·P}, saturating at {@link Limit#MAX_SCALED} (no capacity check: a debt); {@code d < 0}:
 *       {@code B' = max(0, B − |d|·P)}, and what was given back is the whole permits really put back, {@code
 *       floor((B − B')/P)}. Saved as {@code TatState(B', now)}.
 *   <li>fixed window: {@code d > 0} is counted in now's window; {@code d < 0} comes off the count only while the
 *       reservation's window is still now's window, at most the count.
 *   <li>sliding window: the state is first rolled to now's window as {@code tryAcquire} does; {@code d > 0} is counted
 *       in the current window; {@code d < 0} comes off the count of the reservation's window while it is the current
 *       or the previous one, at most that count.
 *   <li>sliding log: entries that slid out are dropped as {@code tryAcquire} does; {@code d > 0} is logged at now
 *       (merged with an entry at now); {@code d < 0} comes off the entry logged at {@code reservedAt} while it is in
 *       the log, at most its cost (removed at zero).
 * </ul>
 * {@code d = 0} changes nothing. {@link Settled#settlement()} is {@code (true, estimate, adjusted, remaining)},
 * {@code remaining} what a decision's {@code remaining} would say right after (0 in debt).
 */
public final class Settle {
    private Settle() {}

    /** The result of one settle step: what to answer, and the state to save. */
    public record Settled(Settlement settlement, State state) {}

    /** The pure step for {@code settle} of a reservation of {@code estimate} made at {@code reservedAtNanos}. */
    public static Settled settle(
            State state, long nowNanos, Limit limit, long estimate, long reservedAtNanos, long actual) {
        long d = actual - estimate;
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> tat((TatState) state, nowNanos, limit, estimate, d);
            case FIXED_WINDOW -> fixedWindow((WindowState) state, nowNanos, limit, estimate, reservedAtNanos, d);
            case SLIDING_WINDOW ->
                slidingWindow((SlidingWindowState) state, nowNanos, limit, estimate, reservedAtNanos, d);
            case SLIDING_LOG -> slidingLog((LogState) state, nowNanos, limit, estimate, reservedAtNanos, d);
        };
    }

    static Settled tat(TatState state, long nowNanos, Limit limit, long estimate, long d) {
        long b = Gcra.backlogAt(state.backlogScaled(), state.atNanos(), nowNanos, limit);
        long after = tatBacklog(b, d, limit);
        return new Settled(
                new Settlement(true, estimate, tatAdjusted(b, after, d, limit), Gcra.remaining(after, limit)),
                new TatState(after, nowNanos));
    }

    /**
     * The backlog after settling {@code d} on backlog {@code b}: {@code B + d·P} saturating at {@link
     * Limit#MAX_SCALED} when charging, {@code max(0, B − |d|·P)} when giving back.
     */
    public static long tatBacklog(long b, long d, Limit limit) {
        long p = limit.intervalScaled();
        if (d >= 0) {
            long charge = Exact.saturatingMultiply(d, p);
            return charge > Limit.MAX_SCALED - b ? Limit.MAX_SCALED : b + charge;
        }
        long back = Exact.saturatingMultiply(-d, p);
        return back >= b ? 0 : b - back;
    }

    /** What a settle from backlog {@code b} to {@code after} did: {@code d} when charging, else the whole permits put back. */
    public static long tatAdjusted(long b, long after, long d, Limit limit) {
        return d >= 0 ? d : -((b - after) / limit.intervalScaled());
    }

    /** Whole tokens left at backlog {@code b}: 0 in debt. */
    public static long tatRemaining(long b, Limit limit) {
        return Gcra.remaining(b, limit);
    }

    static Settled fixedWindow(WindowState state, long nowNanos, Limit limit, long estimate, long reservedAt, long d) {
        long k = FixedWindow.windowOf(nowNanos, limit);
        long count = state.window() == k ? state.count() : 0;
        long adjusted = 0;
        WindowState next = state;
        if (d > 0) {
            count += d;
            adjusted = d;
            next = new WindowState(k, count);
        } else if (d < 0 && state.window() == k && FixedWindow.windowOf(reservedAt, limit) == k) {
            long g = Math.min(-d, count);
            count -= g;
            adjusted = -g;
            next = new WindowState(k, count);
        }
        return new Settled(new Settlement(true, estimate, adjusted, Math.max(0, limit.capacity() - count)), next);
    }

    static Settled slidingWindow(
            SlidingWindowState state, long nowNanos, Limit limit, long estimate, long reservedAt, long d) {
        long w = limit.periodNanos();
        long k = Math.floorDiv(nowNanos, w);
        long kr = Math.floorDiv(reservedAt, w);
        long prev = SlidingWindow.previousAt(state, k);
        long curr = SlidingWindow.currentAt(state, k);
        long adjusted = 0;
        if (d > 0) {
            curr += d;
            adjusted = d;
        } else if (d < 0 && kr == k) {
            long g = Math.min(-d, curr);
            curr -= g;
            adjusted = -g;
        } else if (d < 0 && kr == k - 1) {
            long g = Math.min(-d, prev);
            prev -= g;
            adjusted = -g;
        }
        long remaining = Math.max(0, limit.capacity() - curr - Exact.mulDivCeil(prev, w - (nowNanos - k * w), w));
        return new Settled(new Settlement(true, estimate, adjusted, remaining), new SlidingWindowState(k, prev, curr));
    }

    static Settled slidingLog(LogState state, long nowNanos, Limit limit, long estimate, long reservedAt, long d) {
        long w = limit.periodNanos();
        int n = state.size();
        int first = 0;
        while (first < n && state.time(first) <= nowNanos - w) {
            first++;
        }
        int live = n - first;
        long[] times = new long[live + 1];
        long[] costs = new long[live + 1];
        for (int i = 0; i < live; i++) {
            times[i] = state.time(first + i);
            costs[i] = state.cost(first + i);
        }
        int size = live;
        long adjusted = 0;
        if (d > 0) {
            if (size > 0 && times[size - 1] == nowNanos) {
                costs[size - 1] += d;
            } else {
                times[size] = nowNanos;
                costs[size] = d;
                size++;
            }
            adjusted = d;
        } else if (d < 0) {
            for (int i = 0; i < size; i++) {
                if (times[i] == reservedAt) {
                    long g = Math.min(-d, costs[i]);
                    costs[i] -= g;
                    adjusted = -g;
                    if (costs[i] == 0) {
                        System.arraycopy(times, i + 1, times, i, size - i - 1);
                        System.arraycopy(costs, i + 1, costs, i, size - i - 1);
                        size--;
                    }
                    break;
                }
            }
        }
        long sum = 0;
        for (int i = 0; i < size; i++) {
            sum += costs[i];
        }
        LogState next = new LogState(Arrays.copyOf(times, size), Arrays.copyOf(costs, size));
        return new Settled(new Settlement(true, estimate, adjusted, Math.max(0, limit.capacity() - sum)), next);
    }
}
