package dev.sluice.memory;

import static dev.sluice.memory.Slots.DEAD;
import static dev.sluice.memory.Slots.DEAD_REF;
import static dev.sluice.memory.Slots.LOCKED;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Settle;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.WindowState;
import dev.sluice.memory.Slots.LockedRef;
import java.lang.invoke.VarHandle;

/**
 * The in-memory store's side of a settle: the pure step ({@link Settle}) applied to one key's slot with a
 * compare-and-set, as a single-key decision is ({@link Segment}): the state is read (unpacked for the token bucket,
 * GCRA and fixed window), settled, and published, retrying on contention and waiting out a multi-permit request's
 * hold. A key whose state was evicted meanwhile is settled on a fresh key's state. A packed token bucket or GCRA key
 * is settled on its {@code long} with {@link Settle}'s own arithmetic ({@link Settle#tatBacklog} and the rest),
 * allocating only the answer: the same result as unpacking it to a {@link dev.sluice.algorithm.TatState}, settling
 * and packing it again. And the decision of a reservation
 * at a given instant, which {@link Reservations} records as the reservation's instant.
 */
final class SettledState {
    private static final VarHandle LONGS = Slots.LONGS;
    private static final VarHandle REFS = Slots.REFS;
    /** The largest fixed window count a packed slot holds (32 bits); a count in debt beyond it is kept at it. */
    private static final long MAX_PACKED_COUNT = 0xFFFF_FFFFL;

    private SettledState() {}

    /** {@code tryAcquire} of (h, r) for {@code cost} decided at {@code now}: what a reservation is. */
    static Decision acquireAt(MemoryStore store, long h, RegisteredLimit r, long cost, long now) {
        Segment seg = store.segmentFor(h);
        return r.packed ? seg.acquirePacked(h, r, cost, now, -1) : seg.acquireObject(h, r, cost, now);
    }

    /** Settles (h, r) at {@code now}: see {@link Settle#settle}. */
    static Settlement apply(
            MemoryStore store, long h, RegisteredLimit r, long now, long estimate, long reservedAt, long actual) {
        Segment seg = store.segmentFor(h);
        for (; ; ) {
            seg.ensure(h, r, now);
            Slots s = seg.slots;
            int i = s.find(h, r, seg.limits);
            if (i < 0 || s.limits[i] != r.index) {
                continue; // evicted, moved or read under other numbers meanwhile: look again
            }
            long at = Math.max(now, s.base);
            if (r.packed) {
                long cur = (long) LONGS.getVolatile(s.states, i);
                if (cur == DEAD) {
                    continue;
                }
                if (cur == LOCKED) {
                    Slots.awaitHolder();
                    continue;
                }
                if (r.algorithm != Algorithm.FIXED_WINDOW) { // Settle's token bucket step on the packed value
                    long b = r.backlog(cur, at, s.base);
                    long d = actual - estimate;
                    long after = Settle.tatBacklog(b, d, r.limit);
                    if (LONGS.compareAndSet(s.states, i, cur, r.tat(after, at, s.base))) {
                        return new Settlement(
                                true,
                                estimate,
                                Settle.tatAdjusted(b, after, d, r.limit),
                                Settle.tatRemaining(after, r.limit));
                    }
                    continue;
                }
                Settle.Settled x = Settle.settle(
                        PackedState.unpack(r, cur, at, s.base), at, r.limit, estimate, reservedAt, actual);
                if (LONGS.compareAndSet(s.states, i, cur, PackedState.pack(r, packable(x.state()), at, s.base))) {
                    return x.settlement();
                }
            } else {
                Object[] refs = s.refs;
                if (refs == null) {
                    continue;
                }
                Object cur = REFS.getVolatile(refs, i);
                if (cur == DEAD_REF) {
                    continue;
                }
                if (cur instanceof LockedRef) {
                    Slots.awaitHolder();
                    continue;
                }
                Settle.Settled x = Settle.settle((State) cur, at, r.limit, estimate, reservedAt, actual);
                if (REFS.compareAndSet(refs, i, cur, x.state())) {
                    return x.settlement();
                }
            }
        }
    }

    /** A fixed window count in debt kept within the packed slot's 32 bits (still above any capacity). */
    private static State packable(State state) {
        if (state instanceof WindowState w && w.count() > MAX_PACKED_COUNT) {
            return new WindowState(w.window(), MAX_PACKED_COUNT);
        }
        return state;
    }
}
