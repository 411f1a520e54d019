package dev.sluice.algorithm;

import dev.sluice.Limit;

/**
 * The token bucket: {@code C} tokens at most, refilled continuously at rate {@code r}; a new key starts
 * full. State: the instant {@code F} the bucket is full again. Tokens at {@code t} are
 * {@code min(C, C − (F − t)·r)}; a call for {@code q} is allowed iff tokens ≥ {@code q}, and then
 * {@code F' = max(F, t) + q/r}. A denied call consumes nothing; {@code retryAfter = (q − tokens)/r}.
 *
 * <p>{@code F} is exactly GCRA's theoretical arrival time, so this class is {@link Gcra} under the name
 * users know: the conformance suite asserts the two decide identically.
 */
public final class TokenBucket {
    private TokenBucket() {}

    /** See {@link Gcra#tryAcquire(TatState, long, Limit, long)}. */
    public static Step tryAcquire(TatState state, long nowNanos, Limit limit, long cost) {
        return Gcra.tryAcquire(state, nowNanos, limit, cost);
    }

    /** See {@link Gcra#reserve(TatState, long, Limit, long, long)}. */
    public static Step reserve(TatState state, long nowNanos, Limit limit, long cost, long maxWaitNanos) {
        return Gcra.reserve(state, nowNanos, limit, cost, maxWaitNanos);
    }
}
