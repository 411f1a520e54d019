package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Settlement;
import dev.sluice.StoreException;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory store's pending reservations ({@code tryAcquireEstimate} and {@code settle}): a bounded table from
 * (key hash, reservation id) to (estimate, reserved at, expires at), in 64 stripes by key hash, each a map under its
 * own monitor. A reservation's decision and its record are made under its stripe's monitor, and so are a settle's
 * removal of the record and its change to the key's state ({@link SettledState}): a duplicate id is refused before
 * anything is taken, and of two settles of one reservation exactly one applies. The key's state itself is changed by
 * compare-and-set, as every decision is, so calls on the key that reserve nothing never wait for the monitor.
 *
 * <p><b>Bounded.</b> At most {@code max} records are kept ({@link InMemoryRateLimiter.Builder#maxReservations}). A
 * record expires at its {@code settleWithin} by the store's ticker: its estimate stands and a settle finds nothing.
 * Expired records are dropped from the front of their stripe (the oldest first) at each call on the stripe, and from
 * every stripe when the table is full. When it is still full after that (more reservations pending at once than the
 * bound, none of them expired), {@code tryAcquireEstimate} takes nothing and throws a {@link StoreException} with
 * {@link Degradation#OVERLOADED} that says so: settle sooner, shorten {@code settleWithin} or raise the bound.
 */
final class Reservations {
    private static final int STRIPES = 64;

    /** One reservation's identity: the key's hash (of the key and the limit's identity) and the caller's id. */
    private record Id(long hash, String id) {}

    /** A pending reservation. */
    private record Pending(long estimate, long reservedAt, long expiresAt) {}

    /** One stripe's records, oldest first; guarded by the stripe's monitor. */
    private static final class Stripe {
        final LinkedHashMap<Id, Pending> map = new LinkedHashMap<>();
    }

    private final MemoryStore store;
    private final int max;
    private final AtomicInteger size = new AtomicInteger();

    private final Stripe[] stripes = new Stripe[STRIPES];
    /** No record expires before this instant (as of the last full sweep): a full table is not swept again before. */
    private final AtomicLong sweptUntil = new AtomicLong(Long.MIN_VALUE);

    Reservations(MemoryStore store, int max) {
        this.store = store;
        this.max = max;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Stripe();
        }
    }

    Decision tryAcquireEstimate(String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        Permit.check(key, limit, estimate);
        Settlement.checkId("reservation", reservation);
        Settlement.checkWithin("settleWithin", settleWithin);
        RegisteredLimit r = store.register(limit);
        long h = store.hash(key, r);
        Id id = new Id(h, reservation);
        makeRoom(store.now());
        Stripe stripe = stripes[stripeOf(h)];
        boolean kept = false;
        try {
            synchronized (stripe) {
                long now = store.now();
                dropExpired(stripe, now);
                Pending was = stripe.map.get(id);
                if (was != null && now >= was.expiresAt()) {
                    stripe.map.remove(id); // expired: its estimate stood, and the id is free again
                    size.decrementAndGet();
                } else if (was != null) {
                    throw new IllegalArgumentException("reservation '" + reservation + "' is already pending on key '"
                            + key + "' under " + limit.describe() + " (for " + (was.expiresAt() - now)
                            + " ns more): nothing was taken; use a new id per reservation");
                }
                Decision d = SettledState.acquireAt(store, h, r, estimate, now);
                if (d.allowed()) {
                    long expiresAt = now + settleWithin.toNanos();
                    stripe.map.put(id, new Pending(estimate, now, expiresAt));
                    kept = true;
                    if (expiresAt < sweptUntil.get()) {
                        sweptUntil.accumulateAndGet(expiresAt, Math::min);
                    }
                }
                return d;
            }
        } finally {
            if (!kept) {
                size.decrementAndGet();
            }
        }
    }

    Settlement settle(String key, Limit limit, String reservation, long actual) {
        Permit.checkKeyAndLimit(key, limit);
        Settlement.checkId("reservation", reservation);
        Settlement.checkActual(limit, actual);
        RegisteredLimit r = store.register(limit);
        long h = store.hash(key, r);
        Stripe stripe = stripes[stripeOf(h)];
        synchronized (stripe) {
            long now = store.now();
            dropExpired(stripe, now);
            Pending p = stripe.map.remove(new Id(h, reservation));
            if (p == null) {
                return Settlement.NOT_PENDING;
            }
            size.decrementAndGet();
            if (now >= p.expiresAt()) {
                return Settlement.NOT_PENDING; // its estimate stands
            }
            return SettledState.apply(store, h, r, now, p.estimate(), p.reservedAt(), actual);
        }
    }

    /** How many reservations are kept now (pending, or expired and not yet dropped). */
    int size() {
        return size.get();
    }

    /**
     * Counts one more record in the table, sweeping expired ones from every stripe when it is full; when it is still
     * full, throws (counted in no more). Called with no stripe's monitor held.
     */
    private void makeRoom(long now) {
        if (size.incrementAndGet() <= max) {
            return;
        }
        if (now >= sweptUntil.get()) {
            long next = Long.MAX_VALUE;
            for (Stripe stripe : stripes) {
                synchronized (stripe) {
                    for (Iterator<Pending> it = stripe.map.values().iterator(); it.hasNext(); ) {
                        long expiresAt = it.next().expiresAt();
                        if (now >= expiresAt) {
                            it.remove();
                            size.decrementAndGet();
                        } else {
                            next = Math.min(next, expiresAt);
                        }
                    }
                }
            }
            sweptUntil.set(next);
        }
        if (size.get() > max) {
            size.decrementAndGet();
            throw new StoreException(
                    "the in-memory store holds " + max + " pending reservations, none of them expired:"
                            + " nothing was taken; settle reservations sooner, shorten settleWithin, or raise"
                            + " InMemoryRateLimiter.Builder.maxReservations",
                    null,
                    Degradation.OVERLOADED);
        }
    }

    /** Drops the expired records at the front of a stripe (the oldest), under its monitor. */
    private void dropExpired(Stripe stripe, long now) {
        for (Iterator<Map.Entry<Id, Pending>> it = stripe.map.entrySet().iterator(); it.hasNext(); ) {
            if (now < it.next().getValue().expiresAt()) {
                return;
            }
            it.remove();
            size.decrementAndGet();
        }
    }

    private static int stripeOf(long h) {
        return (int) (h >>> 20) & (STRIPES - 1);
    }
}
