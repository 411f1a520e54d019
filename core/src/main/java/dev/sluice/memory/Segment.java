package dev.sluice.memory;

import static dev.sluice.memory.InMemoryRateLimiter.DEAD;
import static dev.sluice.memory.InMemoryRateLimiter.DEAD_REF;
import static dev.sluice.memory.InMemoryRateLimiter.LOCKED;
import static dev.sluice.memory.InMemoryRateLimiter.packWindow;
import static dev.sluice.memory.InMemoryRateLimiter.windowCount;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.FixedWindow;
import dev.sluice.algorithm.Gcra;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;
import dev.sluice.memory.InMemoryRateLimiter.LockedRef;
import dev.sluice.memory.InMemoryRateLimiter.Registered;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One open-addressed table of the in-memory limiter (linear probing, load ≤ 3/4). Readers and deciders
 * take no lock; inserting, evicting, sweeping and rebuilding hold this segment's monitor. A slot, once
 * given to a key, holds that key until it is marked {@link InMemoryRateLimiter#DEAD}; dead slots are
 * only reclaimed by building a new table, so a compare-and-set on a stale slot fails instead of landing
 * on someone else's state.
 */
final class Segment {
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle REFS = MethodHandles.arrayElementVarHandle(Object[].class);

    /** The arrays of one table generation; replaced whole, never resized in place. */
    static final class Slots {
        final long[] keys;
        final long[] states;
        final short[] limits;
        /** Object states (sliding window, sliding log); allocated only once such a limit is used. */
        final Object[] refs;
        final int capacity;
        final int threshold;
        /** Packed token bucket values count from this instant (epoch ns); see {@link Registered#tat}. */
        final long base;

        Slots(int capacity, boolean withRefs, long base) {
            this.capacity = capacity;
            this.base = base;
            this.threshold = capacity * 3 / 4;
            this.keys = new long[capacity];
            this.states = new long[capacity];
            this.limits = new short[capacity];
            this.refs = withRefs ? new Object[capacity] : null;
        }
    }

    private final InMemoryRateLimiter owner;
    private final int maxLive;
    volatile Slots slots;
    private int live; // guarded by this
    private int used; // live + dead slots, guarded by this

    Segment(InMemoryRateLimiter owner, int maxLive, long now) {
        this.owner = owner;
        this.maxLive = Math.max(1, maxLive);
        this.slots = new Slots(capacityFor(Math.min(this.maxLive, 8)), false, now);
    }

    static int capacityFor(int entries) {
        return Math.max(8, entries + entries / 3 + 1);
    }

    private static int index(long h, int capacity) {
        return (int) (((h & 0xFFFF_FFFFL) * capacity) >>> 32);
    }

    synchronized int liveCount() {
        return live;
    }

    /** The slot of (h, limit) in {@code s}, or -1. */
    static int find(Slots s, long h, int limitIndex) {
        long[] keys = s.keys;
        int cap = s.capacity;
        int i = index(h, cap);
        for (int probes = 0; probes < cap; probes++) {
            long k = (long) LONGS.getAcquire(keys, i);
            if (k == 0) {
                return -1;
            }
            if (k == h && s.limits[i] == limitIndex && (long) LONGS.getVolatile(s.states, i) != DEAD) {
                return i;
            }
            if (++i == cap) {
                i = 0;
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------------------------------------
    // the decision paths

    Decision acquirePacked(long h, Registered r, long cost, long nowRead, long maxWaitScaled) {
        Limit limit = r.limit;
        for (;;) {
            Slots s = slots;
            if (nowRead - s.base > owner.rebaseIntervalNanos) {
                rebase(nowRead);
                continue;
            }
            // a clock read that predates the table's base decides at the base, as if read a moment later
            long now = Math.max(nowRead, s.base);
            int i = find(s, h, r.index);
            if (i < 0) {
                insert(h, r, now);
                continue;
            }
            long[] states = s.states;
            for (;;) {
                long cur = (long) LONGS.getVolatile(states, i);
                if (cur == DEAD) {
                    break; // evicted or moved: look again
                }
                if (cur == LOCKED) {
                    // a multi-permit request holds it for a moment; yield rather than spin, since on a busy machine the holder
                    // may be descheduled and spinning would keep it off the CPU (8 threads on 2 cores: 534 → 185k ops/s)
                    Thread.yield();
                    continue;
                }
                if (r.algorithm == Algorithm.FIXED_WINDOW) {
                    long k = r.window(now, s.base);
                    long count = (cur >>> 32) == k ? windowCount(cur) : 0;
                    if (count + cost > limit.capacity()) {
                        return FixedWindow.denied(count, now, limit);
                    }
                    if (LONGS.compareAndSet(states, i, cur, packWindow(k, count + cost))) {
                        return FixedWindow.allowed(count + cost, now, limit);
                    }
                    continue;
                }
                long backlog = r.backlog(cur, now, s.base);
                long excess = Gcra.excess(backlog, cost, limit);
                boolean reserve = maxWaitScaled >= 0;
                if (reserve ? excess > maxWaitScaled : excess > 0) {
                    return Gcra.denied(backlog, reserve ? excess - maxWaitScaled : excess, limit);
                }
                long after = Gcra.take(backlog, cost, limit);
                if (LONGS.compareAndSet(states, i, cur, r.tat(after, now, s.base))) {
                    return Gcra.allowed(after, reserve ? excess : 0, limit);
                }
            }
        }
    }

    Decision acquireObject(long h, Registered r, long cost, long now) {
        for (;;) {
            Slots s = slots;
            int i = find(s, h, r.index);
            if (i < 0) {
                insert(h, r, now);
                continue;
            }
            Object[] refs = s.refs;
            for (;;) {
                Object cur = REFS.getVolatile(refs, i);
                if (cur == DEAD_REF) {
                    break;
                }
                if (cur instanceof LockedRef) {
                    Thread.yield();
                    continue;
                }
                Step step = InMemoryRateLimiter.step(r, (State) cur, now, cost);
                if (!step.decision().allowed()) {
                    return step.decision();
                }
                if (REFS.compareAndSet(refs, i, cur, step.state())) {
                    return step.decision();
                }
            }
        }
    }

    /** Reads the key's state and decides without writing; an unknown key is read as fresh and not created. */
    Decision peek(long h, Registered r, long cost, long nowRead) {
        for (;;) {
            Slots s = slots;
            if (r.packed && nowRead - s.base > owner.rebaseIntervalNanos) {
                rebase(nowRead);
                continue;
            }
            long now = Math.max(nowRead, s.base);
            int i = find(s, h, r.index);
            if (i < 0) {
                return Algorithms.peek(r.freshObject(), now, r.limit, cost);
            }
            State state;
            if (r.packed) {
                long cur = (long) LONGS.getVolatile(s.states, i);
                if (cur == DEAD) {
                    continue;
                }
                if (cur == LOCKED) {
                    Thread.yield();
                    continue;
                }
                state = InMemoryRateLimiter.unpack(r, cur, now, s.base);
            } else {
                Object cur = REFS.getVolatile(s.refs, i);
                if (cur == DEAD_REF) {
                    continue;
                }
                if (cur instanceof LockedRef) {
                    Thread.yield();
                    continue;
                }
                state = (State) cur;
            }
            return Algorithms.peek(state, now, r.limit, cost);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // multi-permit holds

    /** Locks the slot of (h, r) for a multi-permit request: returns the held packed value or state, or null. */
    Object hold(long h, Registered r, long now, Slots[] where, int[] slot) {
        for (;;) {
            Slots s = slots;
            if (r.packed && now - s.base > owner.rebaseIntervalNanos) {
                return null;
            }
            int i = find(s, h, r.index);
            if (i < 0) {
                return null;
            }
            if (r.packed) {
                long cur = (long) LONGS.getVolatile(s.states, i);
                if (cur == DEAD) {
                    return null;
                }
                if (cur == LOCKED) {
                    Thread.yield();
                    continue;
                }
                if (LONGS.compareAndSet(s.states, i, cur, LOCKED)) {
                    where[0] = s;
                    slot[0] = i;
                    return cur;
                }
            } else {
                Object cur = REFS.getVolatile(s.refs, i);
                if (cur == DEAD_REF) {
                    return null;
                }
                if (cur instanceof LockedRef) {
                    Thread.yield();
                    continue;
                }
                if (REFS.compareAndSet(s.refs, i, cur, new LockedRef((State) cur))) {
                    where[0] = s;
                    slot[0] = i;
                    return cur;
                }
            }
        }
    }

    static void releasePacked(Slots s, int i, long value) {
        LONGS.setVolatile(s.states, i, value);
    }

    static void releaseObject(Slots s, int i, State value) {
        REFS.setVolatile(s.refs, i, value);
    }

    /** Makes sure (h, r) has a slot on a table fit to decide at {@code now}, inserting a fresh key if need be. */
    void ensure(long h, Registered r, long now) {
        if (now - slots.base > owner.rebaseIntervalNanos) {
            rebase(now);
        }
        if (find(slots, h, r.index) < 0) {
            insert(h, r, now);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // structural changes, under the monitor

    private synchronized void insert(long h, Registered r, long now) {
        Slots s = slots;
        if (find(s, h, r.index) >= 0) {
            return;
        }
        boolean needRefs = !r.packed;
        if (used >= s.threshold || live >= maxLive || (needRefs && s.refs == null)) {
            s = rebuild(now, needRefs || s.refs != null);
        }
        int cap = s.capacity;
        int i = index(h, cap);
        while (s.keys[i] != 0) {
            if (++i == cap) {
                i = 0;
            }
        }
        s.limits[i] = (short) r.index;
        if (r.packed) {
            s.states[i] = r.freshPacked(Math.max(now, s.base), s.base);
        } else {
            s.refs[i] = r.freshObject();
        }
        LONGS.setRelease(s.keys, i, h); // publishes the limit and state written above
        live++;
        used++;
    }

    synchronized void remove(long h, int limitIndex) {
        Slots s = slots;
        int i = find(s, h, limitIndex);
        if (i >= 0 && kill(s, i, true) != null) {
            live--;
        }
    }

    /** Rebuilds the table on a new base once now has moved too far from the old one. */
    private synchronized void rebase(long now) {
        if (now - slots.base > owner.rebaseIntervalNanos) {
            rebuild(now, slots.refs != null);
        }
    }

    /**
     * Builds the next table on a new base (now): evicts if full, and moves every live key over, converted
     * to the new base; dead slots and keys that are fresh by now are left behind.
     */
    private Slots rebuild(long now, boolean withRefs) {
        Slots old = slots;
        long base = Math.max(now, old.base);
        if (live >= maxLive) {
            evict(old, base);
        }
        Slots next = new Slots(capacityFor(Math.min(maxLive, Math.max(8, live * 2))), withRefs, base);
        int moved = 0;
        for (int i = 0; i < old.capacity; i++) {
            long h = old.keys[i];
            if (h == 0) {
                continue;
            }
            Object value = kill(old, i, true);
            if (value == null) {
                continue;
            }
            Registered r = owner.registered(old.limits[i]);
            if (value instanceof Long packed) {
                if (r.untilFresh(packed, base, old.base) == 0) {
                    continue; // fresh by now: nothing to carry over
                }
                // re-expressed from the new base: a backlog as of base, or the window counted from it
                value = r.algorithm.isTat() ? r.backlog(packed, base, old.base) : packWindow(0, windowCount(packed));
            } else if (r.untilFresh((State) value, base) == 0) {
                continue;
            }
            int j = index(h, next.capacity);
            while (next.keys[j] != 0) {
                if (++j == next.capacity) {
                    j = 0;
                }
            }
            next.keys[j] = h;
            next.limits[j] = old.limits[i];
            if (value instanceof Long packed) {
                next.states[j] = packed;
            } else {
                next.refs[j] = value;
            }
            moved++;
        }
        live = moved;
        used = moved;
        slots = next; // volatile: publishes the whole table
        return next;
    }

    /**
     * Frees about an eighth of a full segment: first every key whose state equals a fresh key's, then,
     * if that is not enough, the keys closest to fresh (the least recently admitted).
     */
    private void evict(Slots s, long now) {
        int target = Math.max(1, maxLive / 8);
        int killed = killWhere(s, now, 0, Integer.MAX_VALUE);
        if (killed >= target) {
            return;
        }
        long[] sample = new long[64];
        int n = 0;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int tries = 0; n < sample.length && tries < 4 * sample.length; tries++) {
            long v = untilFresh(s, random.nextInt(s.capacity), now);
            if (v >= 0) {
                sample[n++] = v;
            }
        }
        Arrays.sort(sample, 0, n);
        long cut = n == 0 ? Long.MAX_VALUE : sample[Math.min(n - 1, (int) ((long) n * (target - killed) / Math.max(1, live)))];
        killed += killWhere(s, now, cut, target - killed);
        if (killed == 0) {
            killWhere(s, now, Long.MAX_VALUE, 1);
        }
    }

    /** Kills up to {@code max} live, unheld slots whose time to fresh is at most {@code cut}; returns how many. */
    private int killWhere(Slots s, long now, long cut, int max) {
        int killed = 0;
        for (int i = 0; i < s.capacity && killed < max; i++) {
            long v = untilFresh(s, i, now);
            if (v >= 0 && v <= cut && kill(s, i, false) != null) {
                killed++;
                live--;
            }
        }
        return killed;
    }

    /** Nanoseconds until slot i is fresh, or -1 when it is empty, dead or held. */
    private long untilFresh(Slots s, int i, long now) {
        if (s.keys[i] == 0) {
            return -1;
        }
        Registered r = owner.registered(s.limits[i]);
        if (r.packed) {
            long v = (long) LONGS.getVolatile(s.states, i);
            return (v == DEAD || v == LOCKED) ? -1 : r.untilFresh(v, Math.max(now, s.base), s.base);
        }
        Object ref = REFS.getVolatile(s.refs, i);
        return (ref == DEAD_REF || ref instanceof LockedRef || ref == null) ? -1 : r.untilFresh((State) ref, now);
    }

    /**
     * Marks slot i dead and returns what it held (a Long or a State), or null when it was dead already.
     * With {@code wait}, a slot held by a multi-permit request is waited for; without, it is left alone.
     */
    private Object kill(Slots s, int i, boolean wait) {
        Registered r = owner.registered(s.limits[i]);
        if (r.packed) {
            for (;;) {
                long v = (long) LONGS.getVolatile(s.states, i);
                if (v == DEAD) {
                    return null;
                }
                if (v == LOCKED) {
                    if (!wait) {
                        return null;
                    }
                    Thread.yield();
                    continue;
                }
                if (LONGS.compareAndSet(s.states, i, v, DEAD)) {
                    return v;
                }
                if (!wait) {
                    return null; // it just changed: in use, keep it
                }
            }
        }
        for (;;) {
            Object ref = REFS.getVolatile(s.refs, i);
            if (ref == DEAD_REF || ref == null) {
                return null;
            }
            if (ref instanceof LockedRef) {
                if (!wait) {
                    return null;
                }
                Thread.yield();
                continue;
            }
            if (REFS.compareAndSet(s.refs, i, ref, DEAD_REF)) {
                LONGS.setVolatile(s.states, i, DEAD);
                return ref;
            }
            if (!wait) {
                return null;
            }
        }
    }
}
