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
    private SlidingLog() {}

    /** The pure step for {@code peek}: what {@code tryAcquire} would decide, taking nothing; remaining and reset as now. */
    public static Decision peek(LogState state, long nowNanos, Limit limit, long cost) {
        Step step = tryAcquire(state, nowNanos, limit, cost);
        if (!step.decision().allowed()) {
            return step.decision();
        }
        long w = limit.periodNanos();
        int n = state.size();
        boolean any = n > 0 && state.time(n - 1) > nowNanos - w;
        return new Decision(
                true,
                limit.capacity(),
                step.decision().remaining() + cost,
                0,
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
            return new Step(decide(sum, 0, 0, nowNanos, limit, cost), new LogState(times, costs));
        }
        long freed = 0;
        long admitsAt = 0;
        for (int i = first; i < n; i++) {
            freed += state.cost(i);
            if (sum - freed + cost <= c) {
                admitsAt = state.time(i);
                break;
            }
        }
        return new Step(decide(sum, admitsAt, state.time(n - 1), nowNanos, limit, cost), state);
    }

    /**
     * The decision on a live log given by its summary: the sum of the costs in the window, the time of the entry
     * whose leaving admits the call, and the time of the newest entry (both read only when denied: a denied log is
     * never empty, and since {@code cost <= C} some entry's leaving always admits the call). The step above decides
     * by it, and so does a store that keeps the log itself and answers with the summary (Redis's sorted set), so the
     * two cannot drift apart.
     */
    public static Decision decide(
            long liveSum, long admitsAtNanos, long newestNanos, long nowNanos, Limit limit, long cost) {
        long w = limit.periodNanos();
        long c = limit.capacity();
        if (liveSum + cost <= c) {
            return new Decision(true, c, c - liveSum - cost, 0, w);
        }
        // the sum may exceed C when it was logged under larger numbers (Inheritance): none remain then
        return new Decision(
                false, c, Math.max(0, c - liveSum), admitsAtNanos + w - nowNanos, newestNanos + w - nowNanos);
    }
}
