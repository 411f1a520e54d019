package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import org.jspecify.annotations.Nullable;

/**
 * What one node holds of one key under one limit: permits already taken from the shared state and not yet spent,
 * the instant until which each of them may still be spent, the last denial (to answer again without the store),
 * and the key's recent demand here (to size the next take). Guarded by its own monitor.
 *
 * <p><b>Why a held permit expires.</b> For the token bucket and GCRA, a take of {@code b} puts {@code b} cells at
 * the end of the shared schedule: the last one ends at the store's theoretical arrival time {@code A}, the one before
 * at {@code A - T}, and so on ({@code T} the emission interval). Admitting a cell at a time {@code s} is exactly what
 * one shared limiter would do as long as {@code s} is not past that cell's start: the admissions of the whole fleet
 * then fit one shared GCRA schedule, however the nodes interleave (each cell is admitted no earlier than it was taken
 * and no later than its place in the schedule, and the greedy schedule admits every set of cells that fits any
 * schedule). Spending the earliest cell first, of {@code k} held cells those whose start is still ahead are
 * {@code min(k, floor((A - now) / T))}; the others have passed and are dropped (spending them would over-admit).
 * For the fixed window every held permit counts in the window it was taken in, so all of them expire at its end.
 *
 * <p>The store's instant of a decision is unknown here; it lies between sending and receiving. Expiries are
 * computed from the sending instant (earlier, so permits expire early: safe), and the retry time of a remembered
 * denial from the receiving instant (later, so no caller is told to retry before the store would admit).
 */
final class Lease {
    private final Limit limit;
    private final boolean tat;

    /** Permits of the last take not yet spent (or found expired). */
    private long held;
    /** Local instant, epoch ns: the end of the schedule A (token bucket, GCRA) or the window's end (fixed window). */
    private long anchor;
    /** What the takes before the last left held, and the earliest of their anchors: earlier cells, spent first. */
    private long olderHeld;

    private long olderAnchor;
    /** Remaining permits of the shared state after the last take, as the store reported them. */
    private long storeRemaining;

    /** A store denial of {@code deniedCost}: the store denies such a call at least until {@code deniedUntil}. */
    private long deniedUntil = Long.MIN_VALUE;

    private long deniedCost;
    /** When the denied call may be retried, never earlier than the store would admit it. */
    private long retryAt;

    /** Calls here in the current interval of {@code horizon}, and in the last complete one. */
    private long intervalStart;

    private long callsThisInterval;
    private long callsLastInterval;
    /** The most a take may ask for beyond its cost: grows while takes succeed, back to 0 after one is denied. */
    private long extraCap = 1;
    /** The extra permits of the last granted take: a take ahead starts when fewer than half of that are left. */
    private long lastGrant;
    /** A caller's take of {@code takingExtra} extra permits is under way (at most one; others ask for their cost). */
    private boolean taking;

    private long takingExtra;
    /** A take ahead of {@code aheadExtra} permits is under way (at most one), sent no earlier than {@code sentAhead}. */
    private boolean ahead;

    private long aheadExtra;
    private long sentAhead;
    /** Last use, local epoch ns, for evicting idle leases. */
    volatile long lastUsed;

    Lease(Limit limit, long now) {
        this.limit = limit;
        this.tat = limit.algorithm().isTat();
        this.intervalStart = now;
        this.lastUsed = now;
    }

    /** Token bucket, GCRA and fixed window can be leased; the others always ask the store. */
    static boolean leasable(Limit limit) {
        return limit.algorithm().isTat() || limit.algorithm() == Algorithm.FIXED_WINDOW;
    }

    /** Counts a call for the demand estimate. */
    void observe(long now, long horizonNanos) {
        lastUsed = now;
        if (now - intervalStart >= horizonNanos) {
            callsLastInterval = now - intervalStart >= 2 * horizonNanos ? callsThisInterval / 2 : callsThisInterval;
            callsThisInterval = 0;
            intervalStart = now;
        }
        callsThisInterval++;
    }

    /** The held permits that may still be spent at {@code now}; drops the others. */
    long usable(long now) {
        olderHeld = alive(olderHeld, olderAnchor, now);
        held = alive(held, anchor, now);
        return olderHeld + held;
    }

    /** Of {@code n} permits held against {@code anchor}, those still usable at {@code now}. */
    private long alive(long n, long anchor, long now) {
        if (n == 0) {
            return 0;
        }
        if (now >= anchor) {
            return 0;
        }
        return tat ? Math.min(n, cellsBefore(anchor - now, limit)) : n;
    }

    /** How many whole emission intervals fit in {@code nanos}: {@code floor(nanos * timeScale / intervalScaled)}. */
    static long cellsBefore(long nanos, Limit limit) {
        long scale = limit.timeScale();
        long hi = Math.multiplyHigh(nanos, scale);
        if (hi != 0) {
            return Long.MAX_VALUE; // more than 2^63 units: more cells than anyone holds
        }
        long units = nanos * scale;
        return units < 0 ? Long.MAX_VALUE : units / limit.intervalScaled();
    }

    /** Spends {@code cost} held permits if they are usable now; the local decision, or null to ask the store. */
    @Nullable
    Decision trySpend(long now, long cost) {
        if (usable(now) >= cost) {
            long fromOlder = Math.min(olderHeld, cost); // the earlier cells first: they expire first
            olderHeld -= fromOlder;
            held -= cost - fromOlder;
            return new Decision(
                    true,
                    limit.capacity(),
                    Math.min(limit.capacity(), storeRemaining + olderHeld + held),
                    0,
                    Math.max(0, anchor - now));
        }
        if (now < deniedUntil && cost >= deniedCost) {
            return new Decision(false, limit.capacity(), 0, Math.max(1, retryAt - now), Math.max(0, retryAt - now));
        }
        return null;
    }

    /**
     * How many permits beyond {@code cost} the next take asks for: the calls seen here in the last interval (the
     * demand expected in the next), at most {@code maxHeld} less what is held and what takes under way will bring (so
     * this node never holds more than {@code maxHeld}), at most an eighth of the capacity, for the token bucket and
     * GCRA at most what the limit refills in one horizon (so a denied take is worth waiting for: its permits come back
     * within a horizon), and at most what recent takes were granted (it doubles with each granted take; for the fixed
     * window it falls to 0 after a denied one). 0 for a cold key: then a call is exactly one plain store call. Call
     * it just after {@link #usable}, which drops what has expired.
     */
    long extra(long cost, long maxHeld, long horizonNanos) {
        long want = Math.max(callsLastInterval, callsThisInterval) - 1;
        long room = maxHeld - olderHeld - held - (taking ? takingExtra : 0) - (ahead ? aheadExtra : 0);
        long cap = Math.min(Math.min(room, extraCap), limit.capacity() / 8);
        if (tat) {
            cap = Math.min(cap, cellsBefore(horizonNanos, limit));
        }
        long extra = Math.max(0, Math.min(want, cap));
        return Math.min(extra, Math.max(0, limit.capacity() - cost));
    }

    /** The extra permits a caller's take asks for now: 0 while another caller's take is under way. Marks it. */
    long beginTake(long cost, long maxHeld, long horizonNanos) {
        if (taking) {
            return 0;
        }
        long e = extra(cost, maxHeld, horizonNanos);
        taking = e > 0;
        takingExtra = e;
        return e;
    }

    /** The take that asked for {@code extra} is answered (or failed). */
    void endTake(long extra) {
        if (extra > 0) {
            taking = false;
        }
    }

    /**
     * The size of a take ahead to start now, or 0: when no take is under way, no denial is remembered, some permits
     * are still held but fewer than half of the last grant, and the demand asks for more. Marks it under way.
     */
    long prefetch(long now, long maxHeld, long horizonNanos) {
        if (ahead || now < deniedUntil) {
            return 0;
        }
        long u = usable(now);
        if (u == 0 || 2 * u > lastGrant) {
            return 0;
        }
        long n = extra(0, maxHeld, horizonNanos);
        if (n > 0) {
            ahead = true;
            aheadExtra = n;
            sentAhead = now;
        }
        return n;
    }

    /** The store's answer to the take ahead of {@code n} (null: it failed), received at {@code received}. */
    private record Arrival(@Nullable Decision decision, long n, long received) {}

    /** Set by whichever thread completes the take ahead (without the monitor); applied by the next caller. */
    private volatile @Nullable Arrival arrival;

    /** The take ahead has been answered (null: it failed); any thread, without the monitor. */
    void arrived(@Nullable Decision d, long n, long received) {
        arrival = new Arrival(d, n, received);
    }

    /** Applies the answer of the take ahead, if it has come. Under the monitor. */
    void applyArrived() {
        Arrival a = arrival;
        if (a == null) {
            return;
        }
        arrival = null;
        Decision d = a.decision();
        if (d != null) {
            taken(d, 0, a.n(), sentAhead, a.received());
        }
        ahead = false;
    }

    /**
     * Whether a caller whose take of {@code cost + extra} was denied asks again for its cost alone: only for the
     * fixed window (a token-bucket/GCRA denial of a take is remembered for every cost, see {@link #taken}).
     */
    boolean asksAgain(Decision d, long extra) {
        return extra > 0 && d.denied() && !d.degraded() && !tat;
    }

    /**
     * Records what the store decided for a take of {@code cost + extra} sent at {@code sent} and answered at
     * {@code received}: the extra permits become held (what the take before left held stays usable as the older
     * cells, see {@link #makeRoom}), or the denial is remembered.
     */
    void taken(Decision d, long cost, long extra, long sent, long received) {
        if (d.degraded()) {
            return; // decided without the store: nothing was taken from it
        }
        if (d.allowed() && extra == 0) {
            // nothing taken ahead: what is held stays as it is
            storeRemaining = d.remaining();
            if (extraCap == 0) {
                extraCap = 1;
            }
            deniedUntil = Long.MIN_VALUE;
        } else if (d.allowed()) {
            usable(sent);
            makeRoom(received);
            // the end of the schedule (TAT) or of the window, as a local instant no later than the store's
            anchor = sent + d.resetAfterNanos() - (tat ? 1 : 0);
            held = extra;
            lastGrant = extra;
            storeRemaining = d.remaining();
            if (extra > 0 || extraCap == 0) {
                extraCap = Math.max(1, Math.min(Long.MAX_VALUE / 2, extraCap * 2));
            }
            deniedUntil = Long.MIN_VALUE;
        } else if (extra > 0 && !tat) {
            // a window short of the extra permits may stay so until its end: ask again for the cost alone
            extraCap = 0;
        } else {
            // Denied: the store still denies this much until sent + retryAfter. A take with extra permits is at most
            // what the limit refills in one horizon, so waiting for all of it is short; meanwhile every call here is
            // denied (what it leaves in the store stays there, for any node) and told to retry no earlier than then.
            deniedUntil = sent + d.retryAfterNanos();
            deniedCost = extra > 0 ? 1 : cost;
            retryAt = received + d.retryAfterNanos();
        }
    }

    /**
     * Makes the held segment the older one, for a new take's permits. When both still hold permits (a take ahead
     * answered after a caller's take, say), they become one older segment under the earlier anchor: each of their
     * cells is then counted as starting no later than it does, which is safe (for the fixed window, a later window's
     * cells are never held while an earlier window's may still be spent). Dropping the older segment instead would
     * lose permits that have not expired, and the node would under-admit by more than it holds; that is done only
     * when the merged segment would keep fewer at {@code now} (the earlier anchor too close).
     */
    private void makeRoom(long now) {
        if (held > 0 && olderHeld > 0) {
            long earlier = Math.min(anchor, olderAnchor);
            long merged = alive(olderHeld + held, earlier, now);
            if (merged >= alive(held, anchor, now)) {
                olderHeld = merged;
                olderAnchor = earlier;
                return;
            }
        }
        if (held > 0 || olderHeld == 0) {
            olderHeld = held;
            olderAnchor = anchor;
        }
    }

    /** Forgets everything held and remembered (after a reset of the key). */
    void clear() {
        held = 0;
        olderHeld = 0;
        deniedUntil = Long.MIN_VALUE;
    }

    /** The caller's view of a granted take of {@code cost + extra}: the extra permits are this node's to spend. */
    static Decision asked(Decision d, Limit limit, long extra) {
        return new Decision(
                true,
                d.limit(),
                Math.min(limit.capacity(), d.remaining() + extra),
                0,
                d.resetAfterNanos(),
                d.degradation());
    }
}
