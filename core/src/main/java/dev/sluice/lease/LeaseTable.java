package dev.sluice.lease;

import dev.sluice.Limit;
import dev.sluice.Ticker;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The leases of one {@link LeasedRateLimiter}, by (key, limit): at most {@code maxKeys} of them; when full, leases
 * unused for ten horizons are dropped to make room (what they held has expired or is about to: a bounded loss), and
 * if that frees nothing a new key gets no lease (it takes the plain path).
 */
final class LeaseTable {
    private record Key(String key, Limit limit) {}

    private final ConcurrentHashMap<Key, Lease> leases = new ConcurrentHashMap<>();
    private final Ticker ticker;
    private final long horizonNanos;
    private final int maxKeys;

    LeaseTable(Ticker ticker, long horizonNanos, int maxKeys) {
        this.ticker = ticker;
        this.horizonNanos = horizonNanos;
        this.maxKeys = maxKeys;
    }

    /** The lease of a leasable key, made on first use, or null when {@code maxKeys} leases exist already. */
    @Nullable
    Lease lease(String key, Limit limit) {
        Key k = new Key(key, limit);
        Lease l = leases.get(k);
        if (l != null) {
            return l;
        }
        if (leases.size() >= maxKeys) {
            evictIdle();
            if (leases.size() >= maxKeys) {
                return null;
            }
        }
        return leases.computeIfAbsent(k, x -> new Lease(limit, ticker.read()));
    }

    /** The lease of {@code key} under {@code limit} if there is one, else null; makes none. */
    @Nullable
    Lease existing(String key, Limit limit) {
        return leases.get(new Key(key, limit));
    }

    /** Permits of {@code key} under {@code limit} held here at {@code now} (0 when it has no lease). */
    long held(String key, Limit limit, long now) {
        Lease l = existing(key, limit);
        if (l == null) {
            return 0;
        }
        synchronized (l) {
            return l.usable(now);
        }
    }

    void clear() {
        leases.clear();
    }

    private void evictIdle() {
        long cutoff = ticker.read() - 10 * horizonNanos;
        leases.values().removeIf(l -> l.lastUsed < cutoff);
    }
}
