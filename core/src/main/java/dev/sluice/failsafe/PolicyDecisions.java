package dev.sluice.failsafe;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The decisions a {@link FailurePolicy} makes when the store cannot, counted by cause. {@code FAIL_OPEN} allows
 * with a fresh key's numbers, {@code FAIL_CLOSED} denies until the next probe, {@code FALLBACK_LOCAL} asks an
 * in-memory limiter with the same limits, created on first use and kept across outages (its buckets keep
 * refilling in between). Every decision made here is marked with its {@link Degradation}.
 */
final class PolicyDecisions implements AutoCloseable {

    private final FailurePolicy policy;
    private final long probeIntervalNanos;
    private final Ticker ticker;
    private final EnumMap<Degradation, LongAdder> degraded = new EnumMap<>(Degradation.class);
    private final Object lock = new Object();
    /** Null until first used, unless given. */
    private volatile @Nullable RateLimiter fallback;

    PolicyDecisions(FailurePolicy policy, long probeIntervalNanos, Ticker ticker, @Nullable RateLimiter fallback) {
        this.policy = policy;
        this.probeIntervalNanos = probeIntervalNanos;
        this.ticker = ticker;
        this.fallback = fallback;
        for (Degradation cause : Degradation.values()) {
            degraded.put(cause, new LongAdder());
        }
    }

    long count(Degradation cause) {
        return counter(cause).sum();
    }

    private LongAdder counter(Degradation cause) {
        return Objects.requireNonNull(degraded.get(cause), "every cause has a counter");
    }

    /** The local fallback if it was made (or given), else null. */
    @Nullable
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
    /** @param maxWait the reservation's wait for {@link Call#RESERVE}, null for the other calls */
    Decision decide(Call call, String key, Limit limit, long cost, @Nullable Duration maxWait, Degradation cause) {
        counter(cause).increment();
        if (policy != FailurePolicy.FALLBACK_LOCAL) {
            return byPolicy(limit, cost, cause);
        }
        RateLimiter local = local();
        Decision d = switch (call) {
            case TRY_ACQUIRE -> local.tryAcquire(key, limit, cost);
            case RESERVE -> local.reserve(key, limit, cost, Objects.requireNonNull(maxWait, "a reserve has a wait"));
            case PEEK -> local.peek(key, limit, cost);
        };
        return d.withDegradation(cause);
    }

    /** The policy's decision for a multi-permit call: one degraded decision, however many permits. */
    Decision decide(List<Permit> permits, Degradation cause) {
        counter(cause).increment();
        if (policy == FailurePolicy.FALLBACK_LOCAL) {
            return local().tryAcquire(permits).withDegradation(cause);
        }
        Decision d = byPolicy(permits.get(0).limit(), permits.get(0).cost(), cause); // checked: never empty
        for (int i = 1; i < permits.size(); i++) {
            d = d.mostRestrictive(
                    byPolicy(permits.get(i).limit(), permits.get(i).cost(), cause));
        }
        return d;
    }

    /**
     * The policy's decisions for a multi-permit call, each permit's and the overall one, counted once: the local
     * fallback's own (see {@link PermitDecisions}), or fail-open / fail-closed per permit, all marked degraded.
     */
    PermitDecisions decideEach(List<Permit> permits, Degradation cause) {
        counter(cause).increment();
        if (policy == FailurePolicy.FALLBACK_LOCAL) {
            PermitDecisions local = local().tryAcquireEach(permits);
            List<Decision> each = new ArrayList<>(permits.size());
            for (Decision d : local.permits()) {
                each.add(d.withDegradation(cause));
            }
            return new PermitDecisions(local.decision().withDegradation(cause), each);
        }
        List<Decision> each = new ArrayList<>(permits.size());
        for (Permit p : permits) {
            each.add(byPolicy(p.limit(), p.cost(), cause));
        }
        return new PermitDecisions(Decision.mostRestrictive(each), each);
    }

    /**
     * The policy's decision for an estimate the store could not take ({@code tryAcquireEstimate}): fail-open or
     * fail-closed with nothing pending; the local fallback's reservation, pending there (when the local table of
     * reservations is full, the local {@code tryAcquire} of the estimate, nothing pending).
     */
    Decision decideEstimate(String key, Limit limit, long estimate, String id, Duration within, Degradation cause) {
        counter(cause).increment();
        if (policy != FailurePolicy.FALLBACK_LOCAL) {
            return byPolicy(limit, estimate, cause);
        }
        RateLimiter local = local();
        Decision d;
        try {
            d = local.tryAcquireEstimate(key, limit, estimate, id, within);
        } catch (StoreException full) {
            d = local.tryAcquire(key, limit, estimate);
        }
        return d.withDegradation(cause);
    }

    /** Counts a call the store could not make that is no decision (a settle). */
    void countDegraded(Degradation cause) {
        counter(cause).increment();
    }

    /** Settles on the local fallback what was reserved there; {@link Settlement#NOT_PENDING} when there is none. */
    Settlement settleLocally(String key, Limit limit, String id, long actual) {
        RateLimiter local = policy == FailurePolicy.FALLBACK_LOCAL ? fallback : null;
        return local == null ? Settlement.NOT_PENDING : local.settle(key, limit, id, actual);
    }

    /** The fail-open or fail-closed decision, which knows nothing about the key. */
    private Decision byPolicy(Limit limit, long cost, Degradation cause) {
        return policy == FailurePolicy.FAIL_OPEN
                ? new Decision(true, limit.capacity(), limit.capacity() - cost, 0, 0, cause)
                : new Decision(false, limit.capacity(), 0, probeIntervalNanos, probeIntervalNanos, cause);
    }

    /** Counts a decision the policy made instead of the store, made elsewhere ({@link FailSafeInFlight}). */
    void degraded(Degradation cause) {
        counter(cause).increment();
    }

    /** The local fallback, made on first use. */
    RateLimiter local() {
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
