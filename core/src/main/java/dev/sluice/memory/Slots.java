package dev.sluice.memory;

import dev.sluice.algorithm.State;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * The arrays of one table generation of a {@link Segment}: open addressing with linear probing, replaced whole,
 * never resized in place. A slot is (key hash, limit index, state): a packed {@code long} for the token bucket,
 * GCRA and fixed window, an object in {@link #refs} for the others. Once given to a key a slot holds that key
 * until it is marked dead ({@link #DEAD}, {@link #DEAD_REF}), so a
 * compare-and-set on a stale slot fails instead of landing on another key's state.
 */
final class Slots {
    static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    static final VarHandle REFS = MethodHandles.arrayElementVarHandle(Object[].class);

    /** A packed slot that was evicted or moved to a new table: never written again ({@link PackedState}: never < 0). */
    static final long DEAD = Long.MIN_VALUE;
    /** A packed slot held by a multi-permit request for a moment. */
    static final long LOCKED = Long.MIN_VALUE + 1;
    /** The mark of an evicted or moved object slot. */
    static final Object DEAD_REF = new Object();

    /** Placeholder for a multi-permit request's hold on an object slot, keeping the state it replaced. */
    static final class LockedRef {
        final State held;

        LockedRef(State held) {
            this.held = held;
        }
    }

    final long[] keys;
    final long[] states;
    final short[] limits;
    /** Object states (sliding window, sliding log); null until such a limit is used. */
    final Object @Nullable [] refs;

    final int capacity;
    final int threshold;
    /** Packed token bucket values count from this instant (epoch ns); see {@link RegisteredLimit#tat}. */
    final long base;
    /**
     * This table's place in its segment's succession of tables (0, 1, 2, …): what a handle remembers of the table its
     * key was found on, rather than the table itself, so that a handle never keeps a replaced table alive.
     */
    final long generation;

    /**
     * Waits for a multi-permit request's hold on a slot ({@code LOCKED}) to end: yields rather than spins, since on a
     * busy machine the holder may be descheduled and spinning would keep it off the CPU (8 threads on 2 cores: 534 →
     * 185k ops/s).
     */
    @SuppressWarnings("ThreadPriorityCheck") // yielding to the holder is the point: see above
    static void awaitHolder() {
        Thread.yield();
    }

    Slots(int capacity, boolean withRefs, long base, long generation) {
        this.capacity = capacity;
        this.base = base;
        this.generation = generation;
        this.threshold = capacity * 3 / 4;
        this.keys = new long[capacity];
        this.states = new long[capacity];
        this.limits = new short[capacity];
        this.refs = withRefs ? new Object[capacity] : null;
    }

    /** The capacity that holds {@code entries} at a load of at most 3/4. */
    static int capacityFor(int entries) {
        return Math.max(8, entries + entries / 3 + 1);
    }

    /** The home slot of hash {@code h}. */
    int home(long h) {
        return (int) (((h & 0xFFFF_FFFFL) * capacity) >>> 32);
    }

    /**
     * The slot of (h, r's identity), or -1. Lock-free. The slot may hold state written under other numbers of the
     * identity ({@code limits[i] != r.index}): the caller reads it under r's ({@link Segment#reinterpret}).
     */
    int find(long h, RegisteredLimit r, LimitRegistry registry) {
        int cap = capacity;
        int i = home(h);
        for (int probes = 0; probes < cap; probes++) {
            long k = (long) LONGS.getAcquire(keys, i);
            if (k == 0) {
                return -1;
            }
            if (k == h
                    && (limits[i] == r.index || registry.get(limits[i]).identity == r.identity)
                    && (long) LONGS.getVolatile(states, i) != DEAD) {
                return i;
            }
            if (++i == cap) {
                i = 0;
            }
        }
        return -1;
    }

    /** The first empty slot from h's home on; the caller (under the segment's monitor) has made sure one is free. */
    int empty(long h) {
        int i = home(h);
        while (keys[i] != 0) {
            if (++i == capacity) {
                i = 0;
            }
        }
        return i;
    }

    void releasePacked(int i, long value) {
        LONGS.setVolatile(states, i, value);
    }

    void releaseObject(int i, State value) {
        REFS.setVolatile(refs, i, value);
    }

    /** Nanoseconds until slot i (of limit {@code r}) is fresh, or -1 when it is empty, dead or held. */
    long untilFresh(int i, long now, RegisteredLimit r) {
        if (keys[i] == 0) {
            return -1;
        }
        if (r.packed) {
            long v = (long) LONGS.getVolatile(states, i);
            return (v == DEAD || v == LOCKED) ? -1 : r.untilFresh(v, Math.max(now, base), base);
        }
        Object ref = REFS.getVolatile(refs, i);
        return (ref == DEAD_REF || ref instanceof LockedRef || ref == null) ? -1 : r.untilFresh((State) ref, now);
    }

    /**
     * Marks slot i (of limit {@code r}) dead and returns what it held (a Long or a State), or null when it was dead
     * already. With {@code wait}, a slot held by a multi-permit request is waited for; without, it is left alone.
     */
    @Nullable
    Object kill(int i, boolean wait, RegisteredLimit r) {
        if (r.packed) {
            for (; ; ) {
                long v = (long) LONGS.getVolatile(states, i);
                if (v == DEAD) {
                    return null;
                }
                if (v == LOCKED) {
                    if (!wait) {
                        return null;
                    }
                    awaitHolder();
                    continue;
                }
                if (LONGS.compareAndSet(states, i, v, DEAD)) {
                    return v;
                }
                if (!wait) {
                    return null; // it just changed: in use, keep it
                }
            }
        }
        for (; ; ) {
            Object ref = REFS.getVolatile(refs, i);
            if (ref == DEAD_REF || ref == null) {
                return null;
            }
            if (ref instanceof LockedRef) {
                if (!wait) {
                    return null;
                }
                awaitHolder();
                continue;
            }
            if (REFS.compareAndSet(refs, i, ref, DEAD_REF)) {
                LONGS.setVolatile(states, i, DEAD);
                return ref;
            }
            if (!wait) {
                return null;
            }
        }
    }
}
