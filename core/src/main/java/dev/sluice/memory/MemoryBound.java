package dev.sluice.memory;

import static dev.sluice.memory.InMemoryRateLimiter.LOCKED;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.algorithm.Gcra;
import dev.sluice.memory.InMemoryRateLimiter.Registered;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory store's {@link BoundLimit}: the key's hash, its limit's registration and its segment are resolved
 * once, and the slot the key was last found in is remembered ({@link Where}), so a decision is a clock read, a check
 * that the remembered slot is still the key's, and the compare-and-set. A slot that was evicted, reset or moved
 * to a new table is found dead or on an older table; the handle then looks the key up again (re-creating it
 * fresh if it was evicted), exactly as the keyed call would.
 *
 * <h2>The token bucket and GCRA: a step that builds nothing</h2>
 * For these two the step on the remembered slot ({@link #step}) is written out here, small enough for the JIT to
 * inline into the caller, and returns a {@code long} rather than a {@link Decision}: the backlog after the take
 * when allowed, its complement when denied. {@link #tryAcquirePermits} keeps only the sign, so it allocates nothing
 * and computes no remaining or retry time; {@link #tryAcquire(long)} builds its {@code Decision} from the same long
 * in one place ({@link Gcra#decision}). When the slot is gone the handle locates the key again and repeats the
 * step, so every verdict comes from this one step. It is the segment's step
 * ({@link Segment#acquirePacked}) with nothing left out: {@code TAT' = max(TAT, now) + q·T}, allowed iff
 * {@code TAT' − now ≤ C·T}, denied calls write nothing, one compare-and-set publishes.
 */
final class MemoryBound extends BoundLimit {
    private static final VarHandle LONGS = Slots.LONGS;
    /** {@link #step}'s answer when the remembered slot is gone (evicted, reset, moved) or its table is due for a rebase. */
    private static final long RELOCATE = Long.MIN_VALUE;

    /**
     * Slot {@code index} of the segment's table {@code generation} ({@link Slots#generation}): immutable, so a racing
     * reader sees both fields or neither. It names the table rather than holding it, so that a handle, kept by its
     * user or by the keyed calls' {@link HotKeys}, never keeps a replaced table (hundreds of kilobytes) alive.
     */
    record Where(long generation, int index) {}

    private final InMemoryRateLimiter owner;
    private final Registered registered;
    private final boolean tat;
    private final long hash;
    /** The key's {@link String#hashCode()}, for {@link HotKeys}. */
    final int keyHash;

    private final Segment segment;
    /** The slot the key was last found in, or null; a plain field: a stale value is checked before it is used. */
    @Nullable
    Where where;

    MemoryBound(InMemoryRateLimiter owner, String key, Limit limit, Sleeper sleeper) {
        this(owner, key, limit, sleeper, owner.register(limit));
    }

    private MemoryBound(InMemoryRateLimiter owner, String key, Limit limit, Sleeper sleeper, Registered registered) {
        this(owner, key, limit, sleeper, registered, owner.hash(key, registered));
    }

    /** For a key whose registration and hash the caller has already resolved. */
    MemoryBound(InMemoryRateLimiter owner, String key, Limit limit, Sleeper sleeper, Registered registered, long hash) {
        super(owner, key, limit, sleeper);
        this.owner = owner;
        this.registered = registered;
        this.tat = registered.algorithm.isTat();
        this.hash = hash;
        this.keyHash = key.hashCode();
        this.segment = owner.segmentFor(hash);
    }

    @Override
    public BoundLimit withSleeper(Sleeper sleeper) {
        return new MemoryBound(owner, key(), limit(), sleeper, registered, hash);
    }

    @Override
    public Decision tryAcquire(long cost) {
        Registered r = registered;
        r.limit.checkCost(cost);
        long now = owner.now();
        if (!tat) {
            return r.packed
                    ? segment.acquirePacked(hash, r, cost, now, -1, this)
                    : segment.acquireObject(hash, r, cost, now);
        }
        long v;
        while ((v = step(cost, now)) == RELOCATE) {
            where = segment.locate(hash, r, now);
        }
        boolean allowed = v >= 0;
        return Gcra.decision(allowed, allowed ? v : ~v, cost, r.limit);
    }

    @Override
    public boolean tryAcquirePermits(long cost) {
        if (!tat) {
            return tryAcquire(cost).allowed();
        }
        registered.limit.checkCost(cost);
        long now = owner.now();
        long v;
        while ((v = step(cost, now)) == RELOCATE) {
            where = segment.locate(hash, registered, now);
        }
        return v >= 0;
    }

    /**
     * The token bucket / GCRA step on the remembered slot at {@code nowRead}: the backlog after taking {@code cost}
     * (≥ 0) when allowed, {@code ~backlog} (&lt; 0) when denied (nothing written), or {@link #RELOCATE}. The slot
     * holds {@code TAT} as {@code (TAT − base)·timeScale}; in those units now is {@code e = (now − base)·timeScale}
     * and the backlog is {@code max(TAT − e, 0)}. A table's base is never further than the limit's rebase interval
     * behind now (else: relocate, which rebases), so {@code e ≤ 2^61} and {@code e + backlog} cannot overflow.
     */
    private long step(long cost, long nowRead) {
        Where w = where;
        Slots s = segment.slots;
        if (w == null || w.generation() != s.generation) {
            return RELOCATE;
        }
        Registered r = registered;
        long base = s.base;
        if (nowRead - base > r.rebaseIntervalNanos) {
            return RELOCATE;
        }
        long e = Math.max(nowRead - base, 0) * r.timeScale; // a read before the base decides at the base
        long taken = cost * r.limit.intervalScaled();
        long room = r.limit.capacityScaled() - taken;
        long[] states = s.states;
        int i = w.index();
        long cur = (long) LONGS.getVolatile(states, i);
        for (; ; ) {
            if (cur < 0) { // packed values are never negative: dead (look again) or held by a multi-permit request
                if (cur != LOCKED) {
                    return RELOCATE;
                }
                Slots.awaitHolder();
                cur = (long) LONGS.getVolatile(states, i);
                continue;
            }
            long backlog = Math.max(cur - e, 0);
            if (backlog > room) {
                return ~backlog;
            }
            long witness = (long) LONGS.compareAndExchange(states, i, cur, e + backlog + taken);
            if (witness == cur) {
                return backlog + taken;
            }
            cur = witness;
        }
    }
}
