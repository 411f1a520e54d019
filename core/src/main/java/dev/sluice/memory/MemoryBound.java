package dev.sluice.memory;

import static dev.sluice.memory.Slots.LOCKED;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Gcra;
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
    /** {@link #step}'s clock argument when it is to read the clock itself, after loading the table. */
    private static final long READ_CLOCK = Long.MIN_VALUE;

    /**
     * Slot {@code index} of the segment's table {@code generation} ({@link Slots#generation}): immutable, so a racing
     * reader sees both fields or neither. It names the table rather than holding it, so that a handle, kept by its
     * user or by the keyed calls' {@link HotKeys}, never keeps a replaced table (hundreds of kilobytes) alive.
     */
    record Where(long generation, int index) {}

    private final MemoryStore store;
    private final Ticker ticker;
    private final RegisteredLimit registered;
    private final Segment segment;
    private final long hash;
    /** The key's {@link String#hashCode()}, for {@link HotKeys}. */
    final int keyHash;

    // the limit's constants the step reads, copied here so that a decision reads them from the handle alone
    private final boolean tat;
    private final long capacity;
    private final long timeScale;
    private final long intervalScaled;
    private final long capacityScaled;
    private final long rebaseIntervalNanos;

    /** The slot the key was last found in, or null; a plain field: a stale value is checked before it is used. */
    @Nullable
    Where where;

    /** The handle of {@code key} under {@code limit}, whose registration {@code r} and hash the store resolved. */
    MemoryBound(
            RateLimiter limiter,
            MemoryStore store,
            String key,
            Limit limit,
            Sleeper sleeper,
            RegisteredLimit r,
            long hash) {
        super(limiter, key, limit, sleeper);
        this.store = store;
        this.ticker = store.ticker();
        this.registered = r;
        this.segment = store.segmentFor(hash);
        this.hash = hash;
        this.keyHash = key.hashCode();
        this.tat = r.algorithm.isTat();
        this.capacity = limit.capacity();
        this.timeScale = r.timeScale;
        this.intervalScaled = limit.intervalScaled();
        this.capacityScaled = limit.capacityScaled();
        this.rebaseIntervalNanos = r.rebaseIntervalNanos;
    }

    @Override
    public BoundLimit withSleeper(Sleeper sleeper) {
        return new MemoryBound(limiter(), store, key(), limit(), sleeper, registered, hash);
    }

    @Override
    public Decision tryAcquire(long cost) {
        RegisteredLimit r = registered;
        checkCost(cost);
        if (!tat) {
            long now = ticker.read();
            return r.packed
                    ? segment.acquirePacked(hash, r, cost, now, -1, this)
                    : segment.acquireObject(hash, r, cost, now);
        }
        long v = stepOrRelocate(cost);
        boolean allowed = v >= 0;
        return Gcra.decision(allowed, allowed ? v : ~v, cost, r.limit);
    }

    @Override
    public boolean tryAcquirePermits(long cost) {
        if (!tat) {
            return tryAcquire(cost).allowed();
        }
        checkCost(cost);
        return stepOrRelocate(cost) >= 0;
    }

    /**
     * {@link #step}, after looking the key up again (and rebasing its table if due) as long as it relocates. A retry
     * decides at the clock reading it located the key with, not at a later one: a limit's rebase interval can be
     * shorter than a rebuild takes, and a retry reading the clock again could find its table due for a rebase again.
     */
    private long stepOrRelocate(long cost) {
        long v = step(cost, READ_CLOCK);
        while (v == RELOCATE) {
            long now = ticker.read();
            where = segment.locate(hash, registered, now);
            v = step(cost, now);
        }
        return v;
    }

    private void checkCost(long cost) {
        if (cost != 1 && (cost < 1 || cost > capacity)) { // a cost of 1 always fits (capacity ≥ 1): no loads for it
            limit().checkCost(cost); // throws, naming the cost and the limit
        }
    }

    /**
     * The token bucket / GCRA step on the remembered slot at {@code given} ({@link #READ_CLOCK}: now): the backlog after taking {@code cost} (≥ 0) when
     * allowed, {@code ~backlog} (&lt; 0) when denied (nothing written), or {@link #RELOCATE}. The slot holds {@code TAT}
     * as {@code (TAT − base)·timeScale}; in those units now is {@code e = (now − base)·timeScale} and the backlog is
     * {@code max(TAT − e, 0)}. A table's base is never further than the limit's rebase interval behind now (else:
     * relocate, which rebases), so {@code e ≤ 2^61} and {@code e + backlog} cannot overflow.
     *
     * <p>The table, the slot and the base are loaded before the clock is read, so that their loads overlap the clock
     * read instead of following it; the state word itself is read after it, right before the compare-and-set. A table
     * replaced meanwhile has its slots marked dead first, so the compare-and-set fails and the step relocates; a base
     * later than the clock reading decides at the base, as the segment does.
     */
    private long step(long cost, long given) {
        Where w = where;
        Slots s = segment.slots;
        if (w == null || w.generation() != s.generation) {
            return RELOCATE;
        }
        long[] states = s.states;
        int i = w.index();
        long base = s.base;
        long sinceBase = (given == READ_CLOCK ? ticker.read() : given) - base;
        if (sinceBase > rebaseIntervalNanos) {
            return RELOCATE;
        }
        if (sinceBase < 0) {
            sinceBase = 0; // a read before the base decides at the base (a branch: rare, and off the data's path)
        }
        long e = sinceBase * timeScale;
        long taken = cost * intervalScaled;
        long room = capacityScaled - taken;
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
            long ahead = cur - e; // the backlog, when positive
            if (ahead > room) { // room >= 0 (cost <= capacity): ahead is the backlog; no max on the denying path
                return ~ahead;
            }
            long next = Math.max(cur, e) + taken; // e + max(ahead, 0) + taken, in fewer steps after the clock read
            long witness = (long) LONGS.compareAndExchange(states, i, cur, next);
            if (witness == cur) {
                return next - e; // the backlog after the take
            }
            cur = witness;
        }
    }
}
