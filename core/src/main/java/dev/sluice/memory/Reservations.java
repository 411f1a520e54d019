package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Settlement;
import dev.sluice.StoreException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory store's pending reservations ({@code tryAcquireEstimate} and {@code settle}): a bounded table from
 * (key hash, reservation id) to (estimate, reserved at, expires at), in 64 stripes by key hash, each a table
 * ({@link PendingTable}: one object a record, reused) under its own monitor. A reservation's decision and its record are made under its stripe's monitor, and so are a settle's
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

    private final MemoryStore store;
    private final int max;
    private final AtomicInteger size = new AtomicInteger();

    /** A reservation's record is in the stripe of its key's hash (of the key and the limit's identity). */
    private final PendingTable[] stripes = new PendingTable[STRIPES];
    /** No record expires before this instant (as of the last full sweep): a full table is not swept again before. */
    private final AtomicLong sweptUntil = new AtomicLong(Long.MIN_VALUE);

    Reservations(MemoryStore store, int max) {
        this.store = store;
        this.max = max;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new PendingTable();
        }
    }

    Decision tryAcquireEstimate(String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        Permit.check(key, limit, estimate);
        Settlement.checkId("reservation", reservation);
        Settlement.checkWithin("settleWithin", settleWithin);
        RegisteredLimit r = store.register(limit);
        long h = store.hash(key, r);
        PendingTable stripe = stripes[stripeOf(h)];
        synchronized (stripe) { // the caller's mistake first, even when the table is full
            refuseDuplicate(stripe, h, reservation, key, limit, store.now());
        }
        makeRoom(store.now());
        boolean kept = false;
        try {
            synchronized (stripe) {
                long now = store.now();
                refuseDuplicate(stripe, h, reservation, key, limit, now);
                Decision d = SettledState.acquireAt(store, h, r, estimate, now);
                if (d.allowed()) {
                    long expiresAt = now + settleWithin.toNanos();
                    stripe.add(h, reservation, estimate, now, expiresAt);
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
        PendingTable stripe = stripes[stripeOf(h)];
        synchronized (stripe) {
            long now = store.now();
            dropExpired(stripe, now);
            PendingTable.Pending p = stripe.get(h, reservation);
            if (p == null) {
                return Settlement.NOT_PENDING;
            }
            long estimate = p.estimate;
            long reservedAt = p.reservedAt;
            long expiresAt = p.expiresAt;
            stripe.remove(p);
            size.decrementAndGet();
            if (now >= expiresAt) {
                return Settlement.NOT_PENDING; // its estimate stands
            }
            return SettledState.apply(store, h, r, now, estimate, reservedAt, actual);
        }
    }

    /** Throws when {@code id} is pending (not expired) in {@code stripe}; drops expired records. Under its monitor. */
    private void refuseDuplicate(PendingTable stripe, long h, String id, String key, Limit limit, long now) {
        dropExpired(stripe, now);
        PendingTable.Pending was = stripe.get(h, id);
        if (was != null && now >= was.expiresAt) {
            stripe.remove(was); // expired: its estimate stood, and the id is free again
            size.decrementAndGet();
        } else if (was != null) {
            throw new IllegalArgumentException("reservation '" + id + "' is already pending on key '" + key
                    + "' under " + limit.describe() + " (for " + (was.expiresAt - now)
                    + " ns more): nothing was taken; use a new id per reservation");
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
            for (PendingTable stripe : stripes) {
                synchronized (stripe) {
                    for (PendingTable.Pending p = stripe.oldest(); p != null; ) {
                        PendingTable.Pending newer = PendingTable.newer(p);
                        if (now >= p.expiresAt) {
                            stripe.remove(p);
                            size.decrementAndGet();
                        } else {
                            next = Math.min(next, p.expiresAt);
                        }
                        p = newer;
                    }
                }
            }
            // a record put in an already swept stripe meanwhile may expire sooner: missed until then (conservative)
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
    private void dropExpired(PendingTable stripe, long now) {
        for (PendingTable.Pending p = stripe.oldest(); p != null && now >= p.expiresAt; p = stripe.oldest()) {
            stripe.remove(p);
            size.decrementAndGet();
        }
    }

    private static int stripeOf(long h) {
        return (int) (h >>> 20) & (STRIPES - 1);
    }
}
