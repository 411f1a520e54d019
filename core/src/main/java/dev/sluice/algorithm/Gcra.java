package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.Limit;

/**
 * GCRA, the generic cell rate algorithm ("leaky bucket as a meter"), which is also Sluice's token bucket.
 *
 * <p>A key's only state is its theoretical arrival time {@code TAT}: the instant its bucket is full again.
 * With emission interval {@code T = period / permits}, capacity (burst) {@code C}, cost {@code q} and now
 * {@code t}:
 * <pre>
 *   allowed  iff  max(TAT, t) + q·T − t  ≤  C·T
 *   then          TAT' = max(TAT, t) + q·T
 * </pre>
 * Seen as a token bucket the tokens at {@code t} are {@code C − (TAT − t)/T}, so the test reads "at least
 * {@code q} tokens": the two algorithms decide identically. A denied call leaves {@code TAT} alone: it
 * consumes nothing.
 *
 * <p>The step works on the <em>backlog</em> {@code B = max(0, TAT − t)} measured in units of
 * {@code 1/timeScale} ns (see {@link Limit}), where {@code T} and {@code C·T} are the exact integers
 * {@code P = intervalScaled} and {@code CP = capacityScaled}:
 * <pre>
 *   allowed       iff  B + q·P ≤ CP             B' = B + q·P
 *   remaining     = floor((CP − B') / P)           (tokens left, floored)
 *   resetAfter    = ceil(B' / timeScale) ns         (until full again)
 *   retryAfter    = ceil((B + q·P − CP) / timeScale) ns   when denied: until q tokens are back
 * </pre>
 * Fractions of a token stay in {@code B}: nothing is rounded away between calls.
 */
public final class Gcra {
    private Gcra() {}

    /**
     * The backlog at {@code nowNanos} of a backlog measured at {@code atNanos}: it drains at
     * {@code timeScale} units per nanosecond and never goes below zero.
     */
    public static long backlogAt(long backlogScaled, long atNanos, long nowNanos, Limit limit) {
        long elapsed = nowNanos - atNanos;
        if (elapsed <= 0 || backlogScaled == 0) {
            return backlogScaled;
        }
        // drained iff elapsed·p ≥ backlog, compared in 128 bits rather than by dividing (hot path)
        long p = limit.timeScale();
        long drained = elapsed * p;
        if (Math.multiplyHigh(elapsed, p) != 0 || drained < 0 || drained >= backlogScaled) {
            return 0;
        }
        return backlogScaled - drained;
    }

    /** True iff {@code cost} more permits fit now: {@code B + q·P ≤ CP}. */
    public static boolean fits(long backlogScaled, long cost, Limit limit) {
        return backlogScaled <= limit.capacityScaled() - cost * limit.intervalScaled();
    }

    /** The backlog after taking {@code cost} permits. */
    public static long take(long backlogScaled, long cost, Limit limit) {
        return backlogScaled + cost * limit.intervalScaled();
    }

    /** The decision for an allowed call that left {@code backlogAfter} (may exceed capacity after a reserve). */
    public static Decision allowed(long backlogAfter, long waitScaled, Limit limit) {
        return new Decision(
                true,
                limit.capacity(),
                remaining(backlogAfter, limit),
                waitScaled == 0 ? 0 : toNanos(waitScaled, limit),
                toNanos(backlogAfter, limit));
    }

    /** The decision for a denied call: nothing taken, {@code retryAfter} until {@code excessScaled} has drained. */
    public static Decision denied(long backlogScaled, long excessScaled, Limit limit) {
        return new Decision(
                false,
                limit.capacity(),
                remaining(backlogScaled, limit),
                toNanos(excessScaled, limit),
                toNanos(backlogScaled, limit));
    }

    /**
     * The decision of a call for {@code cost} that met backlog {@code backlogScaled}: when allowed, the backlog after
     * the take ({@link #allowed(long, long, Limit)} with no wait); when denied, the backlog as found
     * ({@link #denied}). One constructor call for both verdicts, so a caller that keeps only
     * {@link Decision#allowed()} lets the JIT drop the record (it cannot when two branches each build one).
     */
    public static Decision decision(boolean allowed, long backlogScaled, long cost, Limit limit) {
        long retryAfterNanos = allowed ? 0 : toNanos(excess(backlogScaled, cost, limit), limit);
        return new Decision(
                allowed,
                limit.capacity(),
                remaining(backlogScaled, limit),
                retryAfterNanos,
                toNanos(backlogScaled, limit));
    }

    /** Whole tokens left: {@code floor((CP − B) / P)}; no division when less than one token's room is left. */
    static long remaining(long backlogScaled, Limit limit) {
        long room = limit.capacityScaled() - backlogScaled;
        long interval = limit.intervalScaled();
        return room < interval ? 0 : room / interval;
    }

    /** Scaled units to nanoseconds, rounded up; no division for rates whose permits divide their period. */
    private static long toNanos(long scaled, Limit limit) {
        long p = limit.timeScale();
        return p == 1 ? scaled : Exact.ceilDiv(scaled, p);
    }

    /** How far a backlog exceeds what {@code cost} allows: {@code B + q·P − CP}, or 0 when it fits. */
    public static long excess(long backlogScaled, long cost, Limit limit) {
        long room = limit.capacityScaled() - cost * limit.intervalScaled();
        return backlogScaled > room ? backlogScaled - room : 0;
    }

    /**
     * {@code maxWait} in backlog units, clamped so that a reserved backlog never exceeds
     * {@link Limit#MAX_SCALED} (a wait longer than {@code (2^62 − CP) / timeScale} ns is treated as that).
     */
    public static long maxWaitScaled(long maxWaitNanos, Limit limit) {
        long cap = Limit.MAX_SCALED - limit.capacityScaled();
        long w = Exact.saturatingMultiply(Math.max(0, maxWaitNanos), limit.timeScale());
        return Math.min(w, cap);
    }

    /** The pure step for {@code tryAcquire}. */
    public static Step tryAcquire(TatState state, long nowNanos, Limit limit, long cost) {
        long b = backlogAt(state.backlogScaled(), state.atNanos(), nowNanos, limit);
        if (fits(b, cost, limit)) {
            long after = take(b, cost, limit);
            return new Step(allowed(after, 0, limit), new TatState(after, nowNanos));
        }
        return new Step(denied(b, excess(b, cost, limit), limit), state);
    }

    /** The pure step for {@code peek}: what {@code tryAcquire} would decide, taking nothing; remaining and reset as now. */
    public static Decision peek(TatState state, long nowNanos, Limit limit, long cost) {
        long b = backlogAt(state.backlogScaled(), state.atNanos(), nowNanos, limit);
        if (fits(b, cost, limit)) {
            return new Decision(true, limit.capacity(), remaining(b, limit), 0, Exact.ceilDiv(b, limit.timeScale()));
        }
        return denied(b, excess(b, cost, limit), limit);
    }

    /**
     * The pure step for {@code reserve}: allowed iff the permits are there within {@code maxWaitNanos}
     * ({@code B + q·P − CP ≤ maxWait}); then they are taken now and {@code retryAfter} is the wait.
     * Denied: nothing taken, {@code retryAfter} until the same reserve would succeed.
     */
    public static Step reserve(TatState state, long nowNanos, Limit limit, long cost, long maxWaitNanos) {
        long b = backlogAt(state.backlogScaled(), state.atNanos(), nowNanos, limit);
        long wait = excess(b, cost, limit);
        long maxWait = maxWaitScaled(maxWaitNanos, limit);
        if (wait <= maxWait) {
            long after = take(b, cost, limit);
            return new Step(allowed(after, wait, limit), new TatState(after, nowNanos));
        }
        return new Step(denied(b, wait - maxWait, limit), state);
    }
}
