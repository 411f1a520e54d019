package dev.sluice;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Work in flight: at most {@code maxInFlight} slots of a key are held at once (concurrent requests per tenant, open
 * streams per API key). A holder takes a slot with a lease and releases it when its work ends; a holder that dies
 * gives its slot back when the lease ends, by the store's clock, never before and never twice. Every store of
 * Sluice (in memory, Redis, PostgreSQL) counts slots exactly, across processes for the shared ones; {@code
 * sluice-tck} checks that. Obtained from {@link RateLimiter#inFlight()}, it shares the store's connections and is
 * closed with it.
 *
 * <p>A slot is one holder id on one key. Taking a slot its holder already holds takes nothing more: it renews the
 * lease (a retried acquire is safe). Releasing a slot not held (never taken, released already, or its lease ended)
 * changes nothing and answers false, so a release can never free another holder's slot. In-flight keys are apart
 * from rate-limit keys: the same key string may be both.
 *
 * <p>The answer is a {@link Decision}: {@code limit} is {@code maxInFlight}; {@code remaining} the slots left free
 * after the call; when denied, {@code retryAfter} the time until the earliest held lease ends (a release may come
 * sooner); {@code resetAfter} the time until every lease held now has ended. The maximum is the caller's on each
 * call: lowering it admits no one until the held slots drop below it; nobody already holding is evicted.
 *
 * <p>As {@link RateLimiter}, each operation has a synchronous and an asynchronous form that decide alike; bad input
 * ({@code maxInFlight} below 1, empty keys, ids or leases out of {@link Settlement#checkId}/{@link
 * Settlement#checkWithin}'s ranges) throws {@link IllegalArgumentException} before anything changes, a store's
 * failure is a {@link StoreException}.
 */
public interface InFlightLimiter {

    /** Takes a slot of {@code key} for {@code holder} until released or until {@code lease} has passed. */
    Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease);

    /** {@link #tryAcquire(String, long, String, Duration)} without blocking the caller on I/O. */
    CompletableFuture<Decision> tryAcquireAsync(String key, long maxInFlight, String holder, Duration lease);

    /** Gives back {@code holder}'s slot of {@code key}; true when it was held (and its lease had not ended). */
    boolean release(String key, String holder);

    /** {@link #release(String, String)} without blocking the caller on I/O. */
    CompletableFuture<Boolean> releaseAsync(String key, String holder);

    /**
     * Extends a held slot's lease to {@code lease} from now (work that runs longer than its first lease); false when
     * the slot is no longer held (its lease ended: the holder should stop, or take a slot again).
     */
    boolean renew(String key, String holder, Duration lease);

    /** {@link #renew(String, String, Duration)} without blocking the caller on I/O. */
    CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease);
}
