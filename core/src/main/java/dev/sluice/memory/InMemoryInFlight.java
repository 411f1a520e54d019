package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.algorithm.InFlightSlots;
import dev.sluice.algorithm.InFlightSlots.Holders;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The in-process {@link InFlightLimiter}: one {@link Holders} per key, each step ({@link InFlightSlots}) made inside
 * {@link ConcurrentHashMap#compute}, so the steps on one key are serial and exact; time is the limiter's ticker.
 *
 * <p><b>Bounded.</b> At most {@code maxSlots} slots are held at once over all keys (the limiter's {@code maxKeys}).
 * A key is dropped as soon as it holds no slot; leases that ended are dropped whenever their key is touched. When the
 * bound is reached, an acquire that would take a new slot first sweeps every key for ended leases; if every slot is
 * still held it fails with a {@link StoreException} ({@link Degradation#OVERLOADED}) naming the bound, rather than
 * answering a denial the key's own maximum does not justify.
 */
final class InMemoryInFlight implements InFlightLimiter {
    private final Ticker ticker;
    private final int maxSlots;
    private final ConcurrentHashMap<String, Holders> keys = new ConcurrentHashMap<>();
    /** Slots held over all keys, ended leases included until they are dropped. */
    private final AtomicInteger slots = new AtomicInteger();

    InMemoryInFlight(Ticker ticker, int maxSlots) {
        this.ticker = ticker;
        this.maxSlots = maxSlots;
    }

    @Override
    public Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkAcquire(key, maxInFlight, holder, lease);
        if (slots.get() >= maxSlots) {
            sweep();
        }
        Decision[] out = new Decision[1];
        keys.compute(key, (k, h) -> {
            Holders hs = h != null ? h : new Holders();
            long now = ticker.read();
            slots.addAndGet(-hs.expire(now));
            int before = hs.held();
            if (before < maxInFlight && slots.get() >= maxSlots && !hs.holds(holder)) {
                throw new StoreException(
                        "the in-memory store holds " + maxSlots + " slots in flight, its bound (maxKeys): release"
                                + " slots when work ends, shorten leases, or build the limiter with a larger maxKeys",
                        null,
                        Degradation.OVERLOADED);
            }
            out[0] = hs.acquire(now, maxInFlight, holder, leaseNanos);
            slots.addAndGet(hs.held() - before);
            return hs.held() == 0 ? null : hs;
        });
        return out[0];
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, long maxInFlight, String holder, Duration lease) {
        return CompletableFuture.completedFuture(tryAcquire(key, maxInFlight, holder, lease));
    }

    @Override
    public boolean release(String key, String holder) {
        InFlightSlots.checkRelease(key, holder);
        boolean[] out = new boolean[1];
        keys.computeIfPresent(key, (k, hs) -> {
            slots.addAndGet(-hs.expire(ticker.read()));
            out[0] = hs.release(holder);
            if (out[0]) {
                slots.decrementAndGet();
            }
            return hs.held() == 0 ? null : hs;
        });
        return out[0];
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
        return CompletableFuture.completedFuture(release(key, holder));
    }

    @Override
    public boolean renew(String key, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkRenew(key, holder, lease);
        boolean[] out = new boolean[1];
        keys.computeIfPresent(key, (k, hs) -> {
            long now = ticker.read();
            slots.addAndGet(-hs.expire(now));
            out[0] = hs.renew(now, holder, leaseNanos);
            return hs.held() == 0 ? null : hs;
        });
        return out[0];
    }

    @Override
    public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
        return CompletableFuture.completedFuture(renew(key, holder, lease));
    }

    /** Slots held now over all keys (ended leases not yet dropped included). */
    int slots() {
        return slots.get();
    }

    /** Drops every ended lease of every key, and the keys left empty. */
    private void sweep() {
        long now = ticker.read();
        for (String key : keys.keySet()) {
            keys.computeIfPresent(key, (k, hs) -> {
                slots.addAndGet(-hs.expire(now));
                return hs.held() == 0 ? null : hs;
            });
        }
    }
}
