package dev.sluice.memory;

import dev.sluice.Limit;
import java.util.Arrays;
import java.util.HashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The limits one in-memory limiter has met, each given a {@code short} index the first time ({@link RegisteredLimit}):
 * a slot stores the index, not the limit. Limits of one {@link Limit#identity()} (a name whose numbers changed) share
 * an identity number, which is what a key's hash is of, and have an index each, which is what a slot records its
 * state was written under. Registering takes a lock; looking up does not.
 */
final class LimitRegistry {
    /** Distinct limits one limiter can track: a slot keeps the limit's index in a {@code short}. */
    static final int MAX_LIMITS = Short.MAX_VALUE;

    private final ConcurrentHashMap<Limit, RegisteredLimit> byLimit = new ConcurrentHashMap<>();
    /** Identity → its number; the latest registration of each identity. Guarded by this. */
    private final HashMap<String, RegisteredLimit> byIdentity = new HashMap<>();

    private volatile RegisteredLimit[] byIndex = new RegisteredLimit[8];
    /** The shortest {@link RegisteredLimit#rebaseIntervalNanos} registered: how far a table's base may lag now. */
    volatile long rebaseIntervalNanos = Long.MAX_VALUE;

    /** The registration of {@code limit}, registering it the first time. */
    RegisteredLimit register(Limit limit) {
        RegisteredLimit r = byLimit.get(limit);
        return r != null ? r : registerSlow(limit);
    }

    /**
     * A registration of {@code limit}'s identity (under any numbers), or null when this limiter has never met the
     * identity: enough to find a key's slot, not to decide under {@code limit}'s numbers.
     */
    @Nullable
    RegisteredLimit lookupIdentity(Limit limit) {
        RegisteredLimit r = byLimit.get(limit); // lock-free for a limit met before, the common case
        return r != null ? r : byIdentity(limit);
    }

    private synchronized @Nullable RegisteredLimit byIdentity(Limit limit) {
        return byIdentity.get(limit.identity());
    }

    /** The limit registered under {@code index} (one a slot holds). */
    RegisteredLimit get(int index) {
        return byIndex[index];
    }

    private synchronized RegisteredLimit registerSlow(Limit limit) {
        RegisteredLimit r = byLimit.get(limit);
        if (r != null) {
            return r;
        }
        int index = byLimit.size();
        if (index >= MAX_LIMITS) {
            throw new IllegalArgumentException("limit " + limit.describe() + " would be the " + (index + 1)
                    + "th distinct limit of this limiter (at most " + MAX_LIMITS
                    + "): create limits once and reuse them rather than one per request");
        }
        RegisteredLimit sameIdentity = byIdentity.get(limit.identity());
        r = new RegisteredLimit(limit, index, sameIdentity != null ? sameIdentity.identity : byIdentity.size());
        byIdentity.put(limit.identity(), r);
        RegisteredLimit[] table = byIndex;
        if (index >= table.length) {
            table = Arrays.copyOf(table, table.length * 2);
        }
        table[index] = r;
        byIndex = table;
        if (r.rebaseIntervalNanos < rebaseIntervalNanos) {
            rebaseIntervalNanos = r.rebaseIntervalNanos;
        }
        byLimit.put(limit, r);
        return r;
    }
}
