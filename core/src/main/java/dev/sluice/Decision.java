package dev.sluice;

import java.time.Duration;
import java.util.List;

/**
 * The answer to one request: whether it was allowed, and the facts a caller needs next.
 *
 * <ul>
 *   <li>{@code limit} — the capacity (bucket size, burst, or window permits) that decided;</li>
 *   <li>{@code remaining} — permits left after this call, floored; never negative;</li>
 *   <li>{@code retryAfterNanos} — zero when allowed (for {@code reserve}: how long to wait before acting);
 *       when denied, the exact time until the same call would be allowed, rounded up to the nanosecond;</li>
 *   <li>{@code resetAfterNanos} — time until the key's state equals a fresh key's (full bucket, empty window).</li>
 * </ul>
 * Durations are kept as nanoseconds so that deciding allocates nothing but this record;
 * {@link #retryAfter()} and {@link #resetAfter()} give them as {@link Duration}s.
 */
public record Decision(boolean allowed, long limit, long remaining, long retryAfterNanos, long resetAfterNanos) {

    public Decision {
        if (remaining < 0 || retryAfterNanos < 0 || resetAfterNanos < 0 || limit < 0) {
            throw new IllegalArgumentException("decision fields must not be negative: limit " + limit
                    + ", remaining " + remaining + ", retryAfterNanos " + retryAfterNanos
                    + ", resetAfterNanos " + resetAfterNanos);
        }
    }

    /** The same record from {@link Duration}s. */
    public Decision(boolean allowed, long limit, long remaining, Duration retryAfter, Duration resetAfter) {
        this(allowed, limit, remaining, retryAfter.toNanos(), resetAfter.toNanos());
    }

    public Duration retryAfter() {
        return Duration.ofNanos(retryAfterNanos);
    }

    public Duration resetAfter() {
        return Duration.ofNanos(resetAfterNanos);
    }

    public boolean denied() {
        return !allowed;
    }

    /**
     * The most restrictive of two decisions, as a multi-permit request reports it: denied if either is,
     * the smaller {@code remaining} (and the {@code limit} that goes with it; the first on a tie), the larger
     * {@code retryAfter} and {@code resetAfter}.
     */
    public Decision mostRestrictive(Decision other) {
        Decision tighter = other.remaining < remaining ? other : this;
        boolean ok = allowed && other.allowed;
        long retry = Math.max(retryAfterNanos, other.retryAfterNanos);
        long reset = Math.max(resetAfterNanos, other.resetAfterNanos);
        if (ok == tighter.allowed && retry == tighter.retryAfterNanos && reset == tighter.resetAfterNanos) {
            return tighter;
        }
        return new Decision(ok, tighter.limit, tighter.remaining, retry, reset);
    }

    /** Folds {@link #mostRestrictive(Decision)} over a non-empty list. */
    public static Decision mostRestrictive(List<Decision> decisions) {
        if (decisions.isEmpty()) {
            throw new IllegalArgumentException("no decisions to combine: give at least one");
        }
        Decision d = decisions.get(0);
        for (int i = 1; i < decisions.size(); i++) {
            d = d.mostRestrictive(decisions.get(i));
        }
        return d;
    }

    @Override
    public String toString() {
        return (allowed ? "allowed" : "denied") + "[limit=" + limit + ", remaining=" + remaining
                + ", retryAfter=" + retryAfter() + ", resetAfter=" + resetAfter() + "]";
    }
}
