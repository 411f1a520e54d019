package dev.sluice;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Decides whether a caller may spend {@code cost} permits on a key under a {@link Limit}, and when it may
 * retry. Every store (memory, Redis, PostgreSQL, the remote service) gives the same decisions for the same
 * inputs; {@code sluice-tck} checks that.
 *
 * <p>State is per (key, limit). A denied call consumes nothing. Bad input (costs below 1 or above the
 * capacity, empty or over-long keys) throws {@link IllegalArgumentException} before any state changes.
 *
 * <p><b>Two views of one operation.</b> Every kind of decision has a synchronous form and an asynchronous one
 * ({@code tryAcquireAsync}, {@code reserveAsync}, {@code peekAsync}, {@code resetAsync}) that decide alike. A
 * remote store (Redis, PostgreSQL, the remote service) implements the asynchronous operation once and its
 * synchronous form waits for it under the store's time budget; a local store decides synchronously (no future on
 * its hot path) and its asynchronous form, the defaults here, completes at once. In both forms bad input throws at
 * once, before any state changes; a store's failure ({@link StoreException}) fails the future of the asynchronous
 * form and is thrown by the synchronous one (a default here may also throw it at once).
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
     * {@link #tryAcquire(List)} without blocking the caller on I/O. The default decides synchronously and completes
     * at once.
     */
    default CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
        return CompletableFuture.completedFuture(tryAcquire(permits));
    }

    /**
     * {@link #tryAcquire(List)} that also says, atomically with the all-or-nothing decision, each permit's own state
     * after the call: see {@link PermitDecisions} for what each element means. Made in one store call by every store
     * of Sluice (in memory, Redis, PostgreSQL) and by the fail-safe and leasing wrappers; what a front end needs to
     * answer per key (the service's statuses per descriptor) without a second round trip.
     *
     * <p>The default, for stores written elsewhere: one permit is {@link #tryAcquire(String, Limit, long)} (exact: a
     * denial took nothing); several are not atomic: {@link #tryAcquire(List)}, then a {@link #peek(String, Limit,
     * long)} of each permit (a concurrent call on the same key may show in those numbers); a store whose peek is
     * unsupported answers each permit with the overall decision ({@link PermitDecisions#combinedOnly()}).
     */
    default PermitDecisions tryAcquireEach(List<Permit> permits) {
        Permit.checkAll(permits);
        if (permits.size() == 1) {
            Permit p = permits.get(0);
            return PermitDecisions.of(tryAcquire(p.key(), p.limit(), p.cost()));
        }
        Decision d = tryAcquire(permits);
        List<Decision> each = new ArrayList<>(permits.size());
        try {
            for (Permit p : permits) {
                each.add(PermitDecisions.after(d, peek(p.key(), p.limit(), p.cost())));
            }
        } catch (RuntimeException e) {
            // unsupported, or failed after the decision was made (its permits possibly taken): the decision stands
            return PermitDecisions.uniform(d, permits.size());
        }
        return new PermitDecisions(d, each);
    }

    /**
     * {@link #tryAcquireEach(List)} without blocking the caller on I/O. The default makes
     * {@link #tryAcquireAsync(String, Limit, long)} for one permit; for several {@link #tryAcquireAsync(List)}, then
     * {@link #peekAsync} of each permit (not atomic: see {@link #tryAcquireEach(List)}).
     */
    default CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
        Permit.checkAll(permits);
        if (permits.size() == 1) {
            Permit p = permits.get(0);
            return tryAcquireAsync(p.key(), p.limit(), p.cost()).thenApply(PermitDecisions::of);
        }
        return tryAcquireAsync(permits).thenCompose(d -> PermitDecisions.peekedAfter(this, d, permits));
    }

    /**
     * Shaping: takes {@code cost} permits now, from the future if need be, when they can be had within
     * {@code maxWait}; the allowed decision's {@code retryAfter} is how long the caller must wait before
     * acting. Otherwise nothing is taken and the decision is denied, its {@code retryAfter} the time until
     * this same call would succeed. Token bucket and GCRA only; window algorithms throw
     * {@link UnsupportedOperationException}.
     */
    Decision reserve(String key, Limit limit, long cost, Duration maxWait);

    /**
     * {@link #reserve(String, Limit, long, Duration)} without blocking the caller on I/O. The default decides
     * synchronously and completes at once.
     */
    default CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
        return CompletableFuture.completedFuture(reserve(key, limit, cost, maxWait));
    }

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

    /**
     * {@link #peek(String, Limit, long)} without blocking the caller on I/O. The default decides synchronously and
     * completes at once.
     */
    default CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        return CompletableFuture.completedFuture(peek(key, limit, cost));
    }

    /** Forgets the state of {@code key} under {@code limit}: it becomes a fresh key. */
    void reset(String key, Limit limit);

    /**
     * {@link #reset(String, Limit)} without blocking the caller on I/O. The default resets synchronously and
     * completes at once.
     */
    default CompletableFuture<Void> resetAsync(String key, Limit limit) {
        reset(key, limit);
        return CompletableFuture.completedFuture(null);
    }

    /**
     * A cost known only afterwards (LLM tokens, bytes, rows scanned), first step: decides as
     * {@link #tryAcquire(String, Limit, long)} on {@code estimate} (denied: nothing is taken and nothing is pending)
     * and, when allowed, leaves reservation {@code reservation} pending on this key and limit until it is settled by
     * {@link #settle} or until {@code settleWithin} has passed by the store's clock, when it settles at its estimate
     * (the estimate stands and a later settle is {@link Settlement#NOT_PENDING}). Every algorithm is supported.
     *
     * <p>The reservation id is the caller's (a UUID, the request's {@code x-request-id}; see {@link
     * Settlement#checkId}), one per reservation: reserving an id already pending on this key and limit takes nothing
     * and throws {@link IllegalArgumentException}, checked atomically with the decision.
     */
    default Decision tryAcquireEstimate(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        throw new UnsupportedOperationException(getClass().getSimpleName()
                + " does not settle costs known afterwards: use a store of Sluice (in memory, Redis, PostgreSQL)");
    }

    /** {@link #tryAcquireEstimate} without blocking the caller on I/O. The default decides and completes at once. */
    default CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        return CompletableFuture.completedFuture(tryAcquireEstimate(key, limit, estimate, reservation, settleWithin));
    }

    /**
     * A cost known only afterwards, second step: settles pending reservation {@code reservation} at {@code actual}
     * (0 to the capacity, {@link Settlement#checkActual}), exactly and atomically, once: the reservation is no longer
     * pending after it, and a settle of an id not pending changes nothing ({@link Settlement#NOT_PENDING}), so a
     * retried settle is safe. The state changes as each algorithm defines, with {@code d = actual − estimate}:
     *
     * <ul>
     *   <li>token bucket, GCRA: {@code d > 0} is taken from the bucket whatever it holds (the bucket may go below
     *       empty: a debt the key's next calls wait out at the refill rate); {@code d < 0} is put back, up to a full
     *       bucket (what would overflow it is not kept).</li>
     *   <li>fixed window: {@code d > 0} is counted in the window current at the settle (its count may go over the
     *       limit until the window ends); {@code d < 0} is taken off the reservation's own window's count while that
     *       window is still the current one; once it has ended, its count ended with it and nothing is given back.
     *   </li>
     *   <li>sliding window: {@code d > 0} is counted in the current window; {@code d < 0} is taken off the count of
     *       the window the reservation was counted in while it is the current or the previous one (as that window's
     *       weight in the estimate), never below zero; older, nothing is given back.</li>
     *   <li>sliding log: {@code d > 0} is logged at the settle's instant (the log may hold more than the limit
     *       until it slides out); {@code d < 0} is taken off the reservation's own entry while it is in the log.</li>
     * </ul>
     * {@link Settlement#adjusted()} says what was charged or given back.
     */
    default Settlement settle(String key, Limit limit, String reservation, long actual) {
        throw new UnsupportedOperationException(getClass().getSimpleName()
                + " does not settle costs known afterwards: use a store of Sluice (in memory, Redis, PostgreSQL)");
    }

    /** {@link #settle} without blocking the caller on I/O. The default settles and completes at once. */
    default CompletableFuture<Settlement> settleAsync(String key, Limit limit, String reservation, long actual) {
        return CompletableFuture.completedFuture(settle(key, limit, reservation, actual));
    }

    /**
     * Work in flight on this store: slots with a lease, at most a maximum held per key at once (see {@link
     * InFlightLimiter}). It shares this limiter's connections and is closed with it.
     */
    default InFlightLimiter inFlight() {
        throw new UnsupportedOperationException(getClass().getSimpleName()
                + " does not limit work in flight: use a store of Sluice (in memory, Redis, PostgreSQL)");
    }

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
