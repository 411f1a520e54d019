package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.Limit;

/**
 * Sliding log: every admission is logged as (time, cost). At {@code t} the log counts the entries in the
 * trailing window {@code (t − W, t]}; a call is allowed iff their costs plus {@code q} are at most
 * {@code C}. An entry logged at {@code τ} leaves the window at {@code τ + W}, so when denied
 * {@code retryAfter} is the time until enough of the oldest entries have left:
 * the first {@code τ_i + W − t} such that the costs logged after {@code τ_i} plus {@code q} are at most
 * {@code C}. {@code resetAfter = τ_last + W − t}. Exact, at the price of memory that grows with the
 * permits logged (hence {@link Limit#MAX_SLIDING_LOG_PERMITS}).
 */
public final class SlidingLog {
    private SlidingLog() {
    }

    /** The pure step for {@code peek}: what {@code tryAcquire} would decide, taking nothing; remaining and reset as now. */
    public static Decision peek(LogState state, long nowNanos, Limit limit, long cost) {
        Step step = tryAcquire(state, nowNanos, limit, cost);
        if (!step.decision().allowed()) {
            return step.decision();
        }
        long w = limit.periodNanos();
        int n = state.size();
        boolean any = n > 0 && state.time(n - 1) > nowNanos - w;
        return new Decision(true, limit.capacity(), step.decision().remaining() + cost, 0,
                any ? state.time(n - 1) + w - nowNanos : 0);
    }

    public static Step tryAcquire(LogState state, long nowNanos, Limit limit, long cost) {
        long w = limit.periodNanos();
        long c = limit.capacity();
        int n = state.size();
        int first = 0;
        while (first < n && state.time(first) <= nowNanos - w) {
            first++;
        }
        long sum = 0;
        for (int i = first; i < n; i++) {
            sum += state.cost(i);
        }
        if (sum + cost <= c) {
            boolean merge = n > first && state.time(n - 1) == nowNanos;
            int live = n - first;
            int size = merge ? live : live + 1;
            long[] times = new long[size];
            long[] costs = new long[size];
            for (int i = 0; i < live; i++) {
                times[i] = state.time(first + i);
                costs[i] = state.cost(first + i);
            }
            times[size - 1] = nowNanos;
            costs[size - 1] = (merge ? costs[size - 1] : 0) + cost;
            return new Step(new Decision(true, c, c - sum - cost, 0, w), new LogState(times, costs));
        }
        long freed = 0;
        long retry = 0;
        for (int i = first; i < n; i++) {
            freed += state.cost(i);
            if (sum - freed + cost <= c) {
                retry = state.time(i) + w - nowNanos;
                break;
            }
        }
        long reset = state.time(n - 1) + w - nowNanos;
        return new Step(new Decision(false, c, c - sum, retry, reset), state);
    }
}
