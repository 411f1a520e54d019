package dev.sluice.memory;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.memory.InMemoryRateLimiter.Registered;

/**
 * The in-memory store's {@link BoundLimit}: the key's hash, its limit's registration and its segment are resolved
 * once, and the slot the key was last found in is remembered ({@link Where}), so a decision is a clock read, a check
 * that the remembered slot is still the key's, and the compare-and-set. A slot that was evicted, reset or moved
 * to a new table is found dead or on an older table; the handle then looks the key up again (re-creating it
 * fresh if it was evicted), exactly as the keyed call would.
 */
final class MemoryBound extends BoundLimit {

    /** A slot of one table generation: immutable, so a racing reader sees both fields or neither. */
    record Where(Slots slots, int index) {
    }

    private final InMemoryRateLimiter owner;
    private final Registered registered;
    private final long hash;
    private final Segment segment;
    /** The slot the key was last found in, or null; a plain field: a stale value is checked before it is used. */
    Where where;

    MemoryBound(InMemoryRateLimiter owner, String key, Limit limit, Sleeper sleeper) {
        super(owner, key, limit, sleeper);
        this.owner = owner;
        this.registered = owner.register(limit);
        this.hash = owner.hash(key, registered);
        this.segment = owner.segmentFor(hash);
    }

    @Override
    public BoundLimit withSleeper(Sleeper sleeper) {
        return new MemoryBound(owner, key(), limit(), sleeper);
    }

    @Override
    public Decision tryAcquire(long cost) {
        Registered r = registered;
        r.limit.checkCost(cost);
        long now = owner.now();
        return r.packed ? segment.acquirePacked(hash, r, cost, now, -1, this) : segment.acquireObject(hash, r, cost, now);
    }
}
