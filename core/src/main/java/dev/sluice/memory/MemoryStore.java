package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import java.util.List;

/**
 * The internals of {@link InMemoryRateLimiter}: where every (key, limit) pair's state lives and how it is decided,
 * apart from the facade, which checks the arguments and owns the keyed calls' {@link HotKeys}. Nothing here calls
 * back into the facade.
 *
 * <h2>How state is kept</h2>
 * Keys are not stored. A (key, limit) pair is reduced to a 64-bit SipHash with a secret drawn per limiter
 * ({@link KeyHasher}: collision odds about n²/2⁶⁵ for n keys), and lives in one of up to 64 {@link Segment}s of
 * open-addressed primitive arrays ({@link Slots}): the hash, a {@code short} limit index ({@link LimitRegistry}), and
 * one {@code long} of state. The hash is of the key and the limit's {@link Limit#identity()}; the index names the
 * numbers the state was written under, and a call with other numbers under the same identity reads that state under
 * its own (in place of the old slot, once: {@link Segment#reinterpret}). That long ({@link PackedState}) is the whole state of a token bucket or GCRA key (how far
 * its theoretical arrival time lies past the table's base instant, in units of 1/{@link Limit#timeScale()} ns) and of
 * a fixed window key (window number and count). A table whose base falls too far behind now is rebuilt on a new base
 * before it decides: the exact arithmetic never overflows and a key idle for years is read right. Sliding windows and
 * sliding logs need more than a long; their slots point to immutable state objects swapped by CAS. bench/README.md
 * gives the bytes a tracked key costs.
 *
 * <h2>Concurrency</h2>
 * A single-key decision reads the state, applies the pure step from {@code dev.sluice.algorithm} and publishes the
 * result with one compare-and-set, retrying on contention; a denied call writes nothing. Inserting a key, evicting
 * and resizing take the segment's monitor. Slots are never reused in place: an evicted or moved slot is marked dead
 * for good, so a late compare-and-set can never land on another key's state. A multi-permit request
 * ({@link MultiPermit}) marks each of its slots locked, in one global order (so two requests cannot deadlock), decides
 * on the locked states and then releases them with the new or the old values: either every permit is taken or none
 * is, and no one sees a partial take.
 *
 * <h2>Handles</h2>
 * A {@link MemoryBound} resolves its key's hash, registration and segment once and remembers the slot its key was
 * last found in, so its decision is a clock read, a check that the slot is still the key's, and the compare-and-set.
 * The keyed calls keep handles of the keys they meet most ({@link HotKeys}).
 *
 * <h2>Memory</h2>
 * At most {@code maxKeys} keys are tracked. When a segment is full ({@link Eviction}), keys whose state equals a fresh
 * key's go first (they carry no information); if that is not enough, the keys closest to fresh go (for a bucket: the
 * one that refills soonest, i.e. the least recently admitted). An evicted key that returns starts fresh, so eviction
 * can only ever be generous to the evicted key, and only when more than {@code maxKeys} keys are active at once.
 */
final class MemoryStore {
    private final Ticker ticker;
    private final KeyHasher hasher = new KeyHasher();
    private final LimitRegistry limits = new LimitRegistry();
    private final Segment[] segments;
    private final int segmentMask;

    MemoryStore(Ticker ticker, int maxKeys) {
        this.ticker = ticker;
        int n = Integer.highestOneBit(Math.max(1, Math.min(64, maxKeys / 256)));
        this.segments = new Segment[n];
        this.segmentMask = n - 1;
        long now = ticker.read();
        for (int i = 0; i < n; i++) {
            segments[i] = new Segment(limits, maxKeys / n, now);
        }
    }

    Ticker ticker() {
        return ticker;
    }

    long now() {
        return ticker.read();
    }

    RegisteredLimit register(Limit limit) {
        return limits.register(limit);
    }

    long hash(String key, RegisteredLimit r) {
        return hasher.hash(key, r.identity);
    }

    Segment segmentFor(long h) {
        return segments[segmentIndex(h)];
    }

    int segmentIndex(long h) {
        return (int) (h >>> 40) & segmentMask;
    }

    /** Decides (h, r) now; a reservation when {@code maxWaitScaled >= 0}, a plain try when it is -1. */
    Decision acquire(long h, RegisteredLimit r, long cost, long maxWaitScaled) {
        long now = ticker.read();
        Segment seg = segmentFor(h);
        return r.packed ? seg.acquirePacked(h, r, cost, now, maxWaitScaled) : seg.acquireObject(h, r, cost, now);
    }

    Decision acquire(String key, Limit limit, long cost, long maxWaitScaled) {
        RegisteredLimit r = limits.register(limit);
        return acquire(hash(key, r), r, cost, maxWaitScaled);
    }

    /** All or none of {@code permits}: see {@link MultiPermit}. */
    Decision acquireAll(List<Permit> permits) {
        return MultiPermit.acquire(this, permits);
    }

    /** {@link #acquireAll} with each permit's own decision: see {@link MultiPermit}. */
    PermitDecisions acquireEach(List<Permit> permits) {
        return MultiPermit.acquireEach(this, permits);
    }

    /**
     * What acquiring would decide now, writing nothing; a limit or key never met is read as fresh, one met under other
     * numbers of the same identity as those numbers' state read under these.
     */
    Decision peek(String key, Limit limit, long cost) {
        long now = ticker.read();
        if (limits.lookupIdentity(limit) == null) {
            return Algorithms.peek(Algorithms.fresh(limit), now, limit, cost);
        }
        RegisteredLimit r = limits.register(limit);
        long h = hash(key, r);
        return segmentFor(h).peek(h, r, cost, now);
    }

    /** Forgets the key's state under the limit's identity, whatever numbers it was written under. */
    void reset(String key, Limit limit) {
        RegisteredLimit r = limits.lookupIdentity(limit);
        if (r == null) {
            return;
        }
        long h = hash(key, r);
        segmentFor(h).remove(h, r);
    }

    int trackedKeys() {
        int n = 0;
        for (Segment s : segments) {
            n += s.liveCount();
        }
        return n;
    }
}
