package dev.sluice;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Decides whether a caller may spend {@code cost} permits on a key under a {@link Limit}, and when it may
 * retry. Every store (memory, Redis, PostgreSQL, the remote service) gives the same decisions for the same
 * inputs; {@code sluice-tck} checks that.
 *
 * <p>State is per (key, limit). A denied call consumes nothing. Bad input (costs below 1 or above the
 * capacity, empty or over-long keys) throws {@link IllegalArgumentException} before any state changes.
 */
public interface RateLimiter extends AutoCloseable {

    /** Tries to spend {@code cost} permits now. Never waits. */
    Decision tryAcquire(String key, Limit limit, long cost);

    /** Tries to spend one permit now. */
    default Decision tryAcquire(String key, Limit limit) {
        return tryAcquire(key, limit, 1);
    }

    /** {@link #tryAcquire(String, Limit, long)} without blocking the caller on I/O. */
    CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost);

    /**
     * All or nothing across several keys and limits: either every permit is taken or none is. The result
     * is the most restrictive decision (see {@link Decision#mostRestrictive(Decision)}). Permits naming the
     * same key and limit are applied one after another, as if they were one larger cost.
     */
    Decision tryAcquire(List<Permit> permits);

    /**
     * Shaping: takes {@code cost} permits now, from the future if need be, when they can be had within
     * {@code maxWait}; the allowed decision's {@code retryAfter} is how long the caller must wait before
     * acting. Otherwise nothing is taken and the decision is denied, its {@code retryAfter} the time until
     * this same call would succeed. Token bucket and GCRA only; window algorithms throw
     * {@link UnsupportedOperationException}.
     */
    Decision reserve(String key, Limit limit, long cost, Duration maxWait);

    /**
     * Check only: the decision {@link #tryAcquire(String, Limit, long)} would make for {@code cost}, without
     * taking anything. Allowed iff {@code cost} permits are available now; {@code retryAfter} is what
     * tryAcquire would say; {@code remaining} and {@code resetAfter} describe the key as it is. A key never
     * seen is not created. What envoy's {@code hits_addend: 0} asks for.
     */
    Decision peek(String key, Limit limit, long cost);

    /** {@link #peek(String, Limit, long)} for one permit. */
    default Decision peek(String key, Limit limit) {
        return peek(key, limit, 1);
    }

    /** Forgets the state of {@code key} under {@code limit}: it becomes a fresh key. */
    void reset(String key, Limit limit);

    /**
     * {@code key} under {@code limit} as an object to keep and call with no key: {@code tryAcquire()},
     * blocking {@code acquire()}, {@code tryAcquire(cost, timeout)}, {@code peek()}, and the async form. See
     * {@link BoundLimit}. Stores may resolve the key once (the in-memory store does); the default binds the keyed
     * calls.
     */
    default BoundLimit bind(String key, Limit limit) {
        return BoundLimit.of(this, key, limit);
    }

    /** Releases connections and threads; never throws a checked exception. */
    @Override
    void close();
}
