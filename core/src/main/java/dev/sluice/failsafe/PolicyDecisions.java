package dev.sluice.failsafe;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The decisions a {@link FailurePolicy} makes when the store cannot, counted by cause. {@code FAIL_OPEN} allows
 * with a fresh key's numbers, {@code FAIL_CLOSED} denies until the next probe, {@code FALLBACK_LOCAL} asks an
 * in-memory limiter with the same limits, created on first use and kept across outages (its buckets keep
 * refilling in between). Every decision made here is marked with its {@link Degradation}.
 */
final class PolicyDecisions implements AutoCloseable {
    private static final Degradation[] CAUSES = Degradation.values();

    private final FailurePolicy policy;
    private final long probeIntervalNanos;
    private final Ticker ticker;
    private final LongAdder[] degraded = new LongAdder[CAUSES.length];
    private final Object lock = new Object();
    private volatile RateLimiter fallback;

    PolicyDecisions(FailurePolicy policy, long probeIntervalNanos, Ticker ticker, RateLimiter fallback) {
        this.policy = policy;
        this.probeIntervalNanos = probeIntervalNanos;
        this.ticker = ticker;
        this.fallback = fallback;
        for (int i = 0; i < degraded.length; i++) {
            degraded[i] = new LongAdder();
        }
    }

    long count(Degradation cause) {
        return degraded[cause.ordinal()].sum();
    }

    /** The local fallback if it was made (or given), else null. */
    RateLimiter fallbackIfAny() {
        return fallback;
    }

    /** The calls a local fallback can be asked to make in the store's place. */
    enum Call {
        TRY_ACQUIRE,
        RESERVE,
        PEEK
    }

    /** The policy's decision for one call the store could not make, counted under {@code cause}. */
    Decision decide(Call call, String key, Limit limit, long cost, Duration maxWait, Degradation cause) {
        degraded[cause.ordinal()].increment();
        if (policy != FailurePolicy.FALLBACK_LOCAL) {
            return byPolicy(limit, cost, cause);
        }
        RateLimiter local = local();
        Decision d = switch (call) {
            case TRY_ACQUIRE -> local.tryAcquire(key, limit, cost);
            case RESERVE -> local.reserve(key, limit, cost, maxWait);
            case PEEK -> local.peek(key, limit, cost);
        };
        return d.withDegradation(cause);
    }

    /** The policy's decision for a multi-permit call: one degraded decision, however many permits. */
    Decision decide(List<Permit> permits, Degradation cause) {
        degraded[cause.ordinal()].increment();
        if (policy == FailurePolicy.FALLBACK_LOCAL) {
            return local().tryAcquire(permits).withDegradation(cause);
        }
        Decision d = null;
        for (Permit p : permits) {
            Decision one = byPolicy(p.limit(), p.cost(), cause);
            d = d == null ? one : d.mostRestrictive(one);
        }
        return d;
    }

    /** The fail-open or fail-closed decision, which knows nothing about the key. */
    private Decision byPolicy(Limit limit, long cost, Degradation cause) {
        return policy == FailurePolicy.FAIL_OPEN
                ? new Decision(true, limit.capacity(), limit.capacity() - cost, 0, 0, cause)
                : new Decision(false, limit.capacity(), 0, probeIntervalNanos, probeIntervalNanos, cause);
    }

    private RateLimiter local() {
        RateLimiter l = fallback;
        if (l == null) {
            synchronized (lock) {
                l = fallback;
                if (l == null) {
                    l = InMemoryRateLimiter.builder().ticker(ticker).build();
                    fallback = l;
                }
            }
        }
        return l;
    }

    @Override
    public void close() {
        RateLimiter local = fallback;
        if (local != null) {
            local.close();
        }
    }
}
