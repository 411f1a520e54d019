package dev.sluice.algorithm;

import java.util.Arrays;

/**
 * Sliding log state: admissions as (epoch nanos, cost), oldest first, at most one entry per instant.
 * Immutable: the arrays are never modified after construction.
 */
public final class LogState implements State {
    public static final LogState FRESH = new LogState(new long[0], new long[0]);

    private final long[] times;
    private final long[] costs;

    public LogState(long[] times, long[] costs) {
        if (times.length != costs.length) {
            throw new IllegalArgumentException(
                    "times and costs differ in length: " + times.length + " vs " + costs.length);
        }
        this.times = times;
        this.costs = costs;
    }

    public int size() {
        return times.length;
    }

    public long time(int i) {
        return times[i];
    }

    public long cost(int i) {
        return costs[i];
    }

    public long[] times() {
        return times.clone();
    }

    public long[] costs() {
        return costs.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LogState s && Arrays.equals(times, s.times) && Arrays.equals(costs, s.costs);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(times) + Arrays.hashCode(costs);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("LogState[");
        for (int i = 0; i < times.length; i++) {
            sb.append(i == 0 ? "" : ", ").append(times[i]).append('×').append(costs[i]);
        }
        return sb.append(']').toString();
    }
}
