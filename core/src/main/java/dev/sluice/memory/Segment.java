package dev.sluice.memory;

import static dev.sluice.memory.PackedState.packWindow;
import static dev.sluice.memory.PackedState.windowCount;
import static dev.sluice.memory.Slots.DEAD;
import static dev.sluice.memory.Slots.DEAD_REF;
import static dev.sluice.memory.Slots.LOCKED;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.FixedWindow;
import dev.sluice.algorithm.Gcra;
import dev.sluice.algorithm.Inheritance;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;
import dev.sluice.memory.Slots.LockedRef;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One open-addressed table of the in-memory limiter (its arrays: {@link Slots}, load ≤ 3/4). Readers and
 * deciders take no lock; inserting, evicting ({@link Eviction}), sweeping and rebuilding hold this segment's
 * monitor. A slot, once given to a key, holds that key until it is marked {@link Slots#DEAD};
 * dead slots are only reclaimed by building a new table, so a compare-and-set on a stale slot fails instead of
 * landing on someone else's state.
 */
final class Segment {
    private static final VarHandle LONGS = Slots.LONGS;
    private static final VarHandle REFS = Slots.REFS;

    /** The limits its slots' indices name; never the limiter itself. */
    final LimitRegistry limits;

    private final int maxLive;
    volatile Slots slots;
    private int live; // guarded by this
    private int used; // live + dead slots, guarded by this

    Segment(LimitRegistry limits, int maxLive, long now) {
        this.limits = limits;
        this.maxLive = Math.max(1, maxLive);
        this.slots = new Slots(Slots.capacityFor(Math.min(this.maxLive, 8)), false, now, 0);
    }

    synchronized int liveCount() {
        return live;
    }

    // ------------------------------------------------------------------------------------------------
    // the decision paths

    Decision acquirePacked(long h, RegisteredLimit r, long cost, long nowRead, long maxWaitScaled) {
        return acquirePacked(h, r, cost, nowRead, maxWaitScaled, null);
    }

    /** With {@code bound}, the slot it remembers is tried first, and the slot found is remembered for next time. */
    Decision acquirePacked(
            long h, RegisteredLimit r, long cost, long nowRead, long maxWaitScaled, @Nullable MemoryBound bound) {
        Limit limit = r.limit;
        for (; ; ) {
            Slots s = slots;
            if (nowRead - s.base > limits.rebaseIntervalNanos) {
                rebase(nowRead);
                continue;
            }
            // a clock read that predates the table's base decides at the base, as if read a moment later
            long now = Math.max(nowRead, s.base);
            MemoryBound.Where w = bound == null ? null : bound.where;
            int i;
            if (w != null && w.generation() == s.generation) {
                i = w.index(); // the key's slot on this table until it is found dead
            } else {
                i = s.find(h, r, limits);
                if (i < 0) {
                    insert(h, r, now);
                    continue;
                }
                if (s.limits[i] != r.index) {
                    reinterpret(h, r, now);
                    continue;
                }
                if (bound != null) {
                    bound.where = new MemoryBound.Where(s.generation, i);
                }
            }
            long[] states = s.states;
            for (; ; ) {
                long cur = (long) LONGS.getVolatile(states, i);
                if (cur == DEAD) {
                    if (bound != null) {
                        bound.where = null;
                    }
                    break; // evicted or moved: look again
                }
                if (cur == LOCKED) {
                    Slots.awaitHolder(); // a multi-permit request holds it for a moment
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

    /** The slot of (h, r) on a table fit to decide at {@code nowRead}: rebases, and inserts a fresh key, if need be. */
    MemoryBound.Where locate(long h, RegisteredLimit r, long nowRead) {
        for (; ; ) {
            Slots s = slots;
            if (nowRead - s.base > limits.rebaseIntervalNanos) {
                rebase(nowRead);
                continue;
            }
            int i = s.find(h, r, limits);
            if (i >= 0 && s.limits[i] == r.index) {
                return new MemoryBound.Where(s.generation, i);
            }
            if (i >= 0) {
                reinterpret(h, r, Math.max(nowRead, s.base));
            } else {
                insert(h, r, Math.max(nowRead, s.base));
            }
        }
    }

    Decision acquireObject(long h, RegisteredLimit r, long cost, long now) {
        for (; ; ) {
            Slots s = slots;
            int i = s.find(h, r, limits);
            if (i < 0) {
                insert(h, r, now);
                continue;
            }
            if (s.limits[i] != r.index) {
                reinterpret(h, r, now);
                continue;
            }
            Object[] refs = s.refs;
            for (; ; ) {
                Object cur = REFS.getVolatile(refs, i);
                if (cur == DEAD_REF) {
                    break;
                }
                if (cur instanceof LockedRef) {
                    Slots.awaitHolder();
                    continue;
                }
                Step step = r.step((State) cur, now, cost);
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
    Decision peek(long h, RegisteredLimit r, long cost, long nowRead) {
        for (; ; ) {
            Slots s = slots;
            if (r.packed && nowRead - s.base > limits.rebaseIntervalNanos) {
                rebase(nowRead);
                continue;
            }
            long now = Math.max(nowRead, s.base);
            int i = s.find(h, r, limits);
            if (i < 0) {
                return Algorithms.peek(r.freshObject(), now, r.limit, cost);
            }
            RegisteredLimit written = limits.get(s.limits[i]);
            State state;
            if (r.packed) {
                long cur = (long) LONGS.getVolatile(s.states, i);
                if (cur == DEAD) {
                    continue;
                }
                if (cur == LOCKED) {
                    Slots.awaitHolder();
                    continue;
                }
                state = PackedState.unpack(written, cur, now, s.base);
            } else {
                Object cur = REFS.getVolatile(s.refs, i);
                if (cur == DEAD_REF) {
                    continue;
                }
                if (cur instanceof LockedRef) {
                    Slots.awaitHolder();
                    continue;
                }
                state = (State) cur;
            }
            if (written != r) {
                state = Inheritance.carryOver(state, now, written.limit, r.limit);
            }
            return Algorithms.peek(state, now, r.limit, cost);
        }
    }

    /**
     * Makes sure (h, r) has a slot written under r's numbers on a table fit to decide at {@code now}, inserting a fresh
     * key, or reading the key's state under r's numbers, if need be.
     */
    void ensure(long h, RegisteredLimit r, long now) {
        if (now - slots.base > limits.rebaseIntervalNanos) {
            rebase(now);
        }
        Slots s = slots;
        int i = s.find(h, r, limits);
        if (i < 0) {
            insert(h, r, now);
        } else if (s.limits[i] != r.index) {
            reinterpret(h, r, Math.max(now, s.base));
        }
    }

    // ------------------------------------------------------------------------------------------------
    // structural changes, under the monitor

    private synchronized void insert(long h, RegisteredLimit r, long now) {
        Slots s = slots;
        if (s.find(h, r, limits) >= 0) {
            return;
        }
        boolean needRefs = !r.packed;
        if (used >= s.threshold || live >= maxLive || (needRefs && s.refs == null)) {
            s = rebuild(now, needRefs || s.refs != null);
        }
        int i = s.empty(h);
        s.limits[i] = (short) r.index;
        if (r.packed) {
            s.states[i] = r.freshPacked(Math.max(now, s.base), s.base);
        } else {
            Objects.requireNonNull(s.refs, "a table holding object states has refs")[i] = r.freshObject();
        }
        LONGS.setRelease(s.keys, i, h); // publishes the limit and state written above
        live++;
        used++;
    }

    /** Forgets (h, r's identity), whatever numbers its state was written under. */
    synchronized void remove(long h, RegisteredLimit r) {
        Slots s = slots;
        int i = s.find(h, r, limits);
        if (i >= 0 && s.kill(i, true, limits.get(s.limits[i])) != null) {
            live--;
        }
    }

    /**
     * Reads the state of (h, r's identity), written under other numbers, under r's numbers at {@code now}
     * ({@link Inheritance}): the old slot is marked dead, as a moved one is, and the state read under the new numbers
     * goes into a new slot that records them. A decider racing on the old slot finds it dead and looks again, so no
     * compare-and-set of a state computed under the old numbers can land on the new ones. Happens once per key and
     * change of numbers; a key whose calls alternate between two sets of numbers is read over at each switch.
     */
    synchronized void reinterpret(long h, RegisteredLimit r, long now) {
        Slots s = slots;
        if (used >= s.threshold) {
            s = rebuild(now, s.refs != null);
        }
        int i = s.find(h, r, limits);
        if (i < 0 || s.limits[i] == r.index) {
            return; // gone, or read under r's numbers by another caller meanwhile
        }
        RegisteredLimit written = limits.get(s.limits[i]);
        Object value = s.kill(i, true, written);
        if (value == null) {
            return;
        }
        long at = Math.max(now, s.base);
        State was = value instanceof Long packed ? PackedState.unpack(written, packed, at, s.base) : (State) value;
        State read = Inheritance.carryOver(was, at, written.limit, r.limit);
        int j = s.empty(h);
        s.limits[j] = (short) r.index;
        if (r.packed) {
            s.states[j] = PackedState.pack(r, read, at, s.base);
        } else {
            Objects.requireNonNull(s.refs, "a table holding object states has refs")[j] = read;
        }
        LONGS.setRelease(s.keys, j, h); // publishes the limit and state written above
        used++;
    }

    /** Rebuilds the table on a new base once now has moved too far from the old one. */
    private synchronized void rebase(long now) {
        if (now - slots.base > limits.rebaseIntervalNanos) {
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
            live -= Eviction.evict(old, base, live, maxLive, limits);
        }
        Slots next = new Slots(
                Slots.capacityFor(Math.min(maxLive, Math.max(8, live * 2))), withRefs, base, old.generation + 1);
        int moved = 0;
        for (int i = 0; i < old.capacity; i++) {
            long h = old.keys[i];
            if (h == 0) {
                continue;
            }
            RegisteredLimit r = limits.get(old.limits[i]);
            Object value = old.kill(i, true, r);
            if (value == null) {
                continue;
            }
            if (value instanceof Long packed) {
                if (r.untilFresh(packed, base, old.base) == 0) {
                    continue; // fresh by now: nothing to carry over
                }
                // re-expressed from the new base: a backlog as of base, or the window counted from it
                value = r.algorithm.isTat() ? r.backlog(packed, base, old.base) : packWindow(0, windowCount(packed));
            } else if (r.untilFresh((State) value, base) == 0) {
                continue;
            }
            int j = next.empty(h);
            next.keys[j] = h;
            next.limits[j] = old.limits[i];
            if (value instanceof Long packed) {
                next.states[j] = packed;
            } else {
                Objects.requireNonNull(next.refs, "a table holding object states has refs")[j] = value;
            }
            moved++;
        }
        live = moved;
        used = moved;
        slots = next; // volatile: publishes the whole table
        return next;
    }
}
