package dev.sluice.algorithm;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Permit;
import dev.sluice.Settlement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * The slots of one in-flight key ({@link InFlightLimiter}) and the pure step every store implements the same way. A
 * key's state is a set of (holder, expiresAt); at {@code now} by the store's clock:
 *
 * <ol>
 *   <li>holders whose lease has ended ({@code expiresAt <= now}) are dropped;</li>
 *   <li>acquire: a holder that holds already gets {@code expiresAt = now + lease} and is allowed (nothing more is
 *       taken); else, when fewer than {@code max} are held, {@code (holder, now + lease)} is added and allowed; else
 *       denied, nothing changes;</li>
 *   <li>release: true iff the holder held (then it is removed); renew: true iff it held (then {@code expiresAt = now +
 *       lease}).</li>
 * </ol>
 * The decision: {@code limit = max}, {@code remaining = max(0, max − held after)}, {@code retryAfter} (denied) the
 * time until the earliest lease ends, {@code resetAfter} until the latest ends (0 when none is held). The Lua script
 * of Redis and the SQL of PostgreSQL are this step; the in-memory store keeps one {@code Holders} per key.
 */
public final class InFlightSlots {
    private InFlightSlots() {}

    /** Checks an acquire's input (nothing has changed yet); returns the lease in nanoseconds. */
    public static long checkAcquire(String key, long maxInFlight, String holder, Duration lease) {
        Permit.checkKey(key);
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight " + maxInFlight + " on key '" + Permit.abbreviate(key)
                    + "' is below 1: allow at least one slot in flight (or deny the work without asking)");
        }
        Settlement.checkId("holder", holder);
        Settlement.checkWithin("lease", lease);
        return lease.toNanos();
    }

    /** Checks a release's input. */
    public static void checkRelease(String key, String holder) {
        Permit.checkKey(key);
        Settlement.checkId("holder", holder);
    }

    /** Checks a renewal's input; returns the lease in nanoseconds. */
    public static long checkRenew(String key, String holder, Duration lease) {
        checkRelease(key, holder);
        Settlement.checkWithin("lease", lease);
        return lease.toNanos();
    }

    /**
     * The decision for {@code held} holders after the step, the earliest and latest expiries among them (ignored
     * when none is held), at {@code now}.
     */
    public static Decision decision(boolean allowed, long max, long held, long earliest, long latest, long now) {
        long retryAfter = allowed || held == 0 ? 0 : Math.max(0, earliest - now);
        long resetAfter = held == 0 ? 0 : Math.max(0, latest - now);
        return new Decision(allowed, max, Math.max(0, max - held), retryAfter, resetAfter);
    }

    /** The holders of one key with their expiry instants (store nanoseconds); not thread-safe: guard it. */
    public static final class Holders {
        private final Map<String, Long> expiries = new HashMap<>(4);

        /** Drops the holders whose lease ended at or before {@code now}; returns how many were dropped. */
        public int expire(long now) {
            int dropped = 0;
            for (Iterator<Long> it = expiries.values().iterator(); it.hasNext(); ) {
                if (it.next() <= now) {
                    it.remove();
                    dropped++;
                }
            }
            return dropped;
        }

        /** The acquire step at {@code now}, after {@link #expire}. */
        public Decision acquire(long now, long max, String holder, long leaseNanos) {
            long expiresAt = saturatedAdd(now, leaseNanos);
            boolean allowed = expiries.containsKey(holder) || expiries.size() < max;
            if (allowed) {
                expiries.put(holder, expiresAt);
            }
            return decision(allowed, max, now);
        }

        /** True iff {@code holder} held a slot (after {@link #expire}); it no longer does. */
        public boolean release(String holder) {
            return expiries.remove(holder) != null;
        }

        /** True iff {@code holder} held a slot (after {@link #expire}); its lease now ends at now + lease. */
        public boolean renew(long now, String holder, long leaseNanos) {
            return expiries.replace(holder, saturatedAdd(now, leaseNanos)) != null;
        }

        public boolean holds(String holder) {
            return expiries.containsKey(holder);
        }

        public int held() {
            return expiries.size();
        }

        /** The latest expiry held, or {@link Long#MIN_VALUE} when none. */
        public long latest() {
            long latest = Long.MIN_VALUE;
            for (long e : expiries.values()) {
                latest = Math.max(latest, e);
            }
            return latest;
        }

        private Decision decision(boolean allowed, long max, long now) {
            long earliest = Long.MAX_VALUE;
            for (long e : expiries.values()) {
                earliest = Math.min(earliest, e);
            }
            return InFlightSlots.decision(allowed, max, expiries.size(), earliest, latest(), now);
        }

        private static long saturatedAdd(long a, long b) {
            long r = a + b;
            return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
        }
    }
}
