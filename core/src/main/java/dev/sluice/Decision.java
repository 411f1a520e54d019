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
 *   <li>{@code resetAfterNanos} — time until the key's state equals a fresh key's (full bucket, empty window);</li>
 *   <li>{@code degradation} — {@link Degradation#NONE} when the store decided; otherwise why a
 *       {@code FailurePolicy} decided instead (see {@code FailSafeRateLimiter}). A degraded decision's numbers
 *       are the policy's, not the store's: fail-open and fail-closed know nothing about the key.</li>
 * </ul>
 * Durations are kept as nanoseconds so that deciding allocates nothing but this record;
 * {@link #retryAfter()} and {@link #resetAfter()} give them as {@link Duration}s.
 */
public record Decision(
        boolean allowed,
        long limit,
        long remaining,
        long retryAfterNanos,
        long resetAfterNanos,
        Degradation degradation) {

    public Decision {
        if (remaining < 0 || retryAfterNanos < 0 || resetAfterNanos < 0 || limit < 0) {
            throw new IllegalArgumentException("decision fields must not be negative: limit " + limit
                    + ", remaining " + remaining + ", retryAfterNanos " + retryAfterNanos
                    + ", resetAfterNanos " + resetAfterNanos);
        }
        if (degradation == null) {
            throw new IllegalArgumentException("degradation must not be null: use Degradation.NONE");
        }
    }

    /** A decision the store made ({@link Degradation#NONE}). */
    public Decision(boolean allowed, long limit, long remaining, long retryAfterNanos, long resetAfterNanos) {
        this(allowed, limit, remaining, retryAfterNanos, resetAfterNanos, Degradation.NONE);
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

    /** Whether a failure policy made this decision instead of the store. */
    public boolean degraded() {
        return degradation != Degradation.NONE;
    }

    /** This decision marked as made in a degraded mode for {@code cause}. */
    public Decision withDegradation(Degradation cause) {
        return cause == degradation
                ? this
                : new Decision(allowed, limit, remaining, retryAfterNanos, resetAfterNanos, cause);
    }

    /**
     * The most restrictive of two decisions, as a multi-permit request reports it: denied if either is,
     * the smaller {@code remaining} (and the {@code limit} that goes with it; the first on a tie), the larger
     * {@code retryAfter} and {@code resetAfter}; degraded if either is (the first one's cause when both are).
     */
    public Decision mostRestrictive(Decision other) {
        Decision tighter = other.remaining < remaining ? other : this;
        boolean ok = allowed && other.allowed;
        long retry = Math.max(retryAfterNanos, other.retryAfterNanos);
        long reset = Math.max(resetAfterNanos, other.resetAfterNanos);
        Degradation cause = degradation != Degradation.NONE ? degradation : other.degradation;
        if (ok == tighter.allowed
                && retry == tighter.retryAfterNanos
                && reset == tighter.resetAfterNanos
                && cause == tighter.degradation) {
            return tighter;
        }
        return new Decision(ok, tighter.limit, tighter.remaining, retry, reset, cause);
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
                + ", retryAfter=" + retryAfter() + ", resetAfter=" + resetAfter()
                + (degraded() ? ", degraded=" + degradation.label() : "") + "]";
    }
}
