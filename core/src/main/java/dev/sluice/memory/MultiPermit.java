package dev.sluice.memory;

import static dev.sluice.memory.Slots.DEAD;
import static dev.sluice.memory.Slots.DEAD_REF;
import static dev.sluice.memory.Slots.LOCKED;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Inheritance;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;
import dev.sluice.memory.Slots.LockedRef;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * All-or-nothing across several (key, limit) pairs in memory. Each distinct slot is held (marked locked)
 * in one global order — segment, then hash, then limit — so two requests can never wait on each other in
 * a cycle; single-key deciders that meet a held slot yield until it is released. With every slot held,
 * the pure steps decide in request order on private copies; then every slot is released with its new
 * state if all permits were granted, or with its old one if any was not.
 */
final class MultiPermit {
    private static final VarHandle LONGS = Slots.LONGS;
    private static final VarHandle REFS = Slots.REFS;

    private MultiPermit() {}

    /** One distinct (key, limit identity) of the request. */
    private static final class Target {
        final long hash;
        final RegisteredLimit registered;
        final Segment segment;
        final int segmentIndex;
        final Slots[] where = new Slots[1];
        final int[] slot = new int[1];
        /** What the hold took: the packed value (a Long) or the State; null until the slot is held. */
        @Nullable
        Object held;
        /** The state before the call; null until every slot is held. */
        @Nullable
        State original;
        /** The state decided on; null until every slot is held. */
        @Nullable
        State scratch;

        Target(long hash, RegisteredLimit registered, Segment segment, int segmentIndex) {
            this.hash = hash;
            this.registered = registered;
            this.segment = segment;
            this.segmentIndex = segmentIndex;
        }

        void release(boolean commit, long now) {
            Slots s = where[0];
            int i = slot[0];
            Object was = Objects.requireNonNull(held, "released only when held");
            if (registered.packed) {
                long value = commit ? PackedState.pack(registered, decided(), now, s.base) : (Long) was;
                s.releasePacked(i, value);
            } else {
                s.releaseObject(i, commit ? decided() : (State) was);
            }
        }

        State decided() {
            return Objects.requireNonNull(scratch, "decided only when every slot is held");
        }
    }

    private static final Comparator<Target> ORDER = Comparator.<Target>comparingInt(t -> t.segmentIndex)
            .thenComparingLong(t -> t.hash)
            .thenComparingInt(t -> t.registered.identity);

    static Decision acquire(MemoryStore store, List<Permit> permits) {
        return acquire(store, permits, null);
    }

    /** {@link #acquire}, with each permit's own decision as {@link PermitDecisions} defines it. */
    static PermitDecisions acquireEach(MemoryStore store, List<Permit> permits) {
        Decision[] each = new Decision[permits.size()];
        Decision d = acquire(store, permits, each);
        return new PermitDecisions(d, Arrays.asList(each));
    }

    /** @param each null, or filled with each permit's own decision (see {@link PermitDecisions}) */
    private static Decision acquire(MemoryStore store, List<Permit> permits, Decision @Nullable [] each) {
        int n = permits.size();
        Target[] byPermit = new Target[n];
        Target[] distinct = new Target[n];
        int d = 0;
        for (int p = 0; p < n; p++) {
            Permit permit = Objects.requireNonNull(permits.get(p), "permits must not contain null");
            RegisteredLimit r = store.register(permit.limit());
            long h = store.hash(permit.key(), r);
            Target t = null;
            for (int j = 0; j < d; j++) {
                if (distinct[j].hash == h && distinct[j].registered.identity == r.identity) {
                    t = distinct[j];
                    break;
                }
            }
            if (t == null) {
                t = new Target(h, r, store.segmentFor(h), store.segmentIndex(h));
                distinct[d++] = t;
            }
            byPermit[p] = t;
        }
        Target[] targets = Arrays.copyOf(distinct, d);
        Arrays.sort(targets, ORDER);
        long now = store.now();
        for (; ; ) {
            for (Target t : targets) {
                t.segment.ensure(t.hash, t.registered, now);
            }
            int held = 0;
            while (held < targets.length) {
                Target t = targets[held];
                t.held = hold(t.segment, t.hash, t.registered, now, t.where, t.slot);
                if (t.held == null) {
                    break; // evicted or moved meanwhile
                }
                held++;
            }
            if (held < targets.length) {
                for (int j = 0; j < held; j++) {
                    targets[j].release(false, now);
                }
                continue;
            }
            long at = now; // decide at one instant no earlier than any held table's base
            for (Target t : targets) {
                at = Math.max(at, t.where[0].base);
            }
            for (Target t : targets) {
                Object was = Objects.requireNonNull(t.held, "every slot is held");
                t.scratch = t.registered.packed
                        ? PackedState.unpack(t.registered, (Long) was, at, t.where[0].base)
                        : (State) was;
                t.original = t.scratch;
            }
            Decision result = null;
            boolean all = true;
            for (int p = 0; p < n; p++) {
                Target t = byPermit[p];
                Limit limit = permits.get(p).limit();
                Step step = Algorithms.tryAcquire(
                        Inheritance.carryOver(t.decided(), at, t.registered.limit, limit),
                        at,
                        limit,
                        permits.get(p).cost());
                // kept under the slot's numbers (a request naming one identity under two sets of numbers is read over)
                t.scratch = Inheritance.carryOver(step.state(), at, limit, t.registered.limit);
                result = result == null ? step.decision() : result.mostRestrictive(step.decision());
                all &= step.decision().allowed();
                if (each != null) {
                    each[p] = step.decision();
                }
            }
            if (each != null && !all) {
                // nothing is taken: each permit's own look at the state the call leaves as it was
                for (int p = 0; p < n; p++) {
                    Permit permit = permits.get(p);
                    State was = Objects.requireNonNull(byPermit[p].original, "every slot is held");
                    State read = Inheritance.carryOver(was, at, byPermit[p].registered.limit, permit.limit());
                    each[p] = Algorithms.peek(read, at, permit.limit(), permit.cost());
                }
            }
            for (Target t : targets) {
                t.release(all, at);
            }
            return Objects.requireNonNull(result, "a request has at least one permit");
        }
    }

    /** Locks the slot of (h, r) in {@code seg} for a multi-permit request: returns the held packed value or state, or null. */
    @Nullable
    private static Object hold(Segment seg, long h, RegisteredLimit r, long now, Slots[] where, int[] slot) {
        for (; ; ) {
            Slots s = seg.slots;
            if (r.packed && now - s.base > seg.limits.rebaseIntervalNanos) {
                return null;
            }
            int i = s.find(h, r, seg.limits);
            if (i < 0 || s.limits[i] != r.index) {
                return null; // gone, or written under other numbers meanwhile: ensure() again
            }
            if (r.packed) {
                long cur = (long) LONGS.getVolatile(s.states, i);
                if (cur == DEAD) {
                    return null;
                }
                if (cur == LOCKED) {
                    Slots.awaitHolder();
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
                    Slots.awaitHolder();
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
}
