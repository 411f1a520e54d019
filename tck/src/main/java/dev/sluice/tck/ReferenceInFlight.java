package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Permit;
import dev.sluice.Settlement;
import dev.sluice.Ticker;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The oracle of work in flight, written straight from the contract ({@link InFlightLimiter}) with no shared code
 * with the stores' step: one lock, a map from key to (holder → expiry instant), never bounded. {@link InFlightTck}'s
 * differential test requires every store to answer exactly as this one does.
 */
final class ReferenceInFlight implements InFlightLimiter {
    private final Ticker ticker;
    private final Map<String, Map<String, Long>> keys = new HashMap<>();

    ReferenceInFlight(Ticker ticker) {
        this.ticker = ticker;
    }

    @Override
    public synchronized Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease) {
        Permit.checkKey(key);
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight " + maxInFlight + " is below 1");
        }
        Settlement.checkId("holder", holder);
        Settlement.checkWithin("lease", lease);
        long now = ticker.read();
        Map<String, Long> held = live(key, now);
        boolean allowed = held.containsKey(holder) || held.size() < maxInFlight;
        if (allowed) {
            held.put(holder, now + lease.toNanos());
        }
        long earliest = held.values().stream().mapToLong(Long::longValue).min().orElse(now);
        long latest = held.values().stream().mapToLong(Long::longValue).max().orElse(now);
        if (held.isEmpty()) {
            keys.remove(key);
        }
        return new Decision(
                allowed,
                maxInFlight,
                Math.max(0, maxInFlight - held.size()),
                allowed ? 0 : earliest - now,
                latest - now);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, long maxInFlight, String holder, Duration lease) {
        return CompletableFuture.completedFuture(tryAcquire(key, maxInFlight, holder, lease));
    }

    @Override
    public synchronized boolean release(String key, String holder) {
        Permit.checkKey(key);
        Settlement.checkId("holder", holder);
        return live(key, ticker.read()).remove(holder) != null;
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
        return CompletableFuture.completedFuture(release(key, holder));
    }

    @Override
    public synchronized boolean renew(String key, String holder, Duration lease) {
        Permit.checkKey(key);
        Settlement.checkId("holder", holder);
        Settlement.checkWithin("lease", lease);
        long now = ticker.read();
        return live(key, now).replace(holder, now + lease.toNanos()) != null;
    }

    @Override
    public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
        return CompletableFuture.completedFuture(renew(key, holder, lease));
    }

    /** The key's holders whose lease has not ended at {@code now}. */
    private Map<String, Long> live(String key, long now) {
        Map<String, Long> held = keys.computeIfAbsent(key, k -> new HashMap<>());
        held.values().removeIf(expiresAt -> expiresAt <= now);
        return held;
    }
}
