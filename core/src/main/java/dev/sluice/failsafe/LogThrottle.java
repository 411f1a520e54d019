package dev.sluice.failsafe;

import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.memory.InMemoryRateLimiter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps a failing store or a flood of denials from flooding the log: per kind of line, bursts of 5 and then 1 a
 * second (a token bucket of Sluice's own in-memory store); the lines left out are counted and reported with the
 * next one. One per component that logs (the service's decisions, a servlet filter), shared by its threads.
 */
public final class LogThrottle {
    private static final Limit LINES = Limit.tokenBucket(5, Rate.perSecond(1)).named("log-lines");
    private final InMemoryRateLimiter limiter =
            InMemoryRateLimiter.builder().maxKeys(64).build();
    private final AtomicLong suppressed = new AtomicLong();

    /** True when a line for {@code kind} may be written now; else counts it as suppressed. */
    public boolean allow(String kind) {
        if (limiter.tryAcquire(kind, LINES).allowed()) {
            return true;
        }
        suppressed.incrementAndGet();
        return false;
    }

    /** Lines left out since the last call, reset to 0. */
    public long suppressedSinceLast() {
        return suppressed.getAndSet(0);
    }
}
