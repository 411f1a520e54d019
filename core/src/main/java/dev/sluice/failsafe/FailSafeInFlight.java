package dev.sluice.failsafe;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.RateLimiter;
import dev.sluice.algorithm.InFlightSlots;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * {@link FailSafeRateLimiter#inFlight()}: the store's slots while it answers, the {@link FailurePolicy}'s when it
 * cannot, through the same {@link Circuit} as the limiter's decisions (a failing slot call counts toward opening it, an
 * answered one closes it). An acquire the store could not make is counted as a degraded decision by its cause and
 * decided:
 *
 * <ul>
 *   <li>{@code FAIL_OPEN}: allowed, with a fresh key's numbers (remaining {@code max − 1}, the lease to reset);</li>
 *   <li>{@code FAIL_CLOSED}: denied, retry after the probe interval, the soonest the store can be back;</li>
 *   <li>{@code FALLBACK_LOCAL}: by in-memory slots (the local fallback's {@link RateLimiter#inFlight()}), kept across
 *       outages, so slots taken locally during one are held, released and renewed locally.</li>
 * </ul>
 * A release or renewal the store could not make is not applied there (the slot's lease ends by itself), and is
 * counted as degraded by its cause like an acquire; under
 * {@code FALLBACK_LOCAL} the local slots answer it; otherwise a release answers false (nothing was released) and a
 * renewal answers as the policy would decide an acquire, true when open (the work may go on), false when closed (the
 * holder should stop). Bad input throws before the store is asked, as the store would.
 */
final class FailSafeInFlight implements InFlightLimiter {
    private final Supplier<@Nullable RateLimiter> storeToTry;
    private final Circuit circuit;
    private final PolicyDecisions byPolicy;
    private final FailurePolicy policy;
    private final long probeIntervalNanos;

    FailSafeInFlight(
            Supplier<@Nullable RateLimiter> storeToTry,
            Circuit circuit,
            PolicyDecisions byPolicy,
            FailurePolicy policy,
            long probeIntervalNanos) {
        this.storeToTry = storeToTry;
        this.circuit = circuit;
        this.byPolicy = byPolicy;
        this.policy = policy;
        this.probeIntervalNanos = probeIntervalNanos;
    }

    @Override
    public Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease) {
        InFlightSlots.checkAcquire(key, maxInFlight, holder, lease);
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return acquireByPolicy(key, maxInFlight, holder, lease, circuit.cause());
        }
        try {
            return succeeded(s.inFlight().tryAcquire(key, maxInFlight, holder, lease));
        } catch (RuntimeException e) {
            return acquireByPolicy(key, maxInFlight, holder, lease, circuit.failed(e));
        }
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, long maxInFlight, String holder, Duration lease) {
        InFlightSlots.checkAcquire(key, maxInFlight, holder, lease);
        return decide(
                s -> s.inFlight().tryAcquireAsync(key, maxInFlight, holder, lease),
                cause -> acquireByPolicy(key, maxInFlight, holder, lease, cause));
    }

    @Override
    public boolean release(String key, String holder) {
        InFlightSlots.checkRelease(key, holder);
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return releaseByPolicy(key, holder, circuit.cause());
        }
        try {
            return succeeded(s.inFlight().release(key, holder));
        } catch (RuntimeException e) {
            return releaseByPolicy(key, holder, circuit.failed(e));
        }
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
        InFlightSlots.checkRelease(key, holder);
        return decide(s -> s.inFlight().releaseAsync(key, holder), cause -> releaseByPolicy(key, holder, cause));
    }

    @Override
    public boolean renew(String key, String holder, Duration lease) {
        InFlightSlots.checkRenew(key, holder, lease);
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return renewByPolicy(key, holder, lease, circuit.cause());
        }
        try {
            return succeeded(s.inFlight().renew(key, holder, lease));
        } catch (RuntimeException e) {
            return renewByPolicy(key, holder, lease, circuit.failed(e));
        }
    }

    @Override
    public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
        InFlightSlots.checkRenew(key, holder, lease);
        return decide(
                s -> s.inFlight().renewAsync(key, holder, lease), cause -> renewByPolicy(key, holder, lease, cause));
    }

    /** The store's answer when it is open and the circuit lets the call through, else the policy's. */
    private <T> CompletableFuture<T> decide(
            Function<RateLimiter, CompletableFuture<T>> ask, Function<Degradation, T> byPolicy) {
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return CompletableFuture.completedFuture(byPolicy.apply(circuit.cause()));
        }
        CompletableFuture<T> f;
        try {
            f = ask.apply(s);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((d, e) -> e == null ? succeeded(d) : byPolicy.apply(circuit.failed(e)));
    }

    private <T> T succeeded(T answer) {
        circuit.succeeded();
        return answer;
    }

    private Decision acquireByPolicy(String key, long max, String holder, Duration lease, Degradation cause) {
        byPolicy.degraded(cause);
        return switch (policy) {
            case FAIL_OPEN -> new Decision(true, max, max - 1, 0, lease.toNanos(), cause);
            case FAIL_CLOSED -> new Decision(false, max, 0, probeIntervalNanos, probeIntervalNanos, cause);
            case FALLBACK_LOCAL ->
                byPolicy.local().inFlight().tryAcquire(key, max, holder, lease).withDegradation(cause);
        };
    }

    /** A release the store could not make, counted as degraded under {@code cause} (as an acquire is). */
    private boolean releaseByPolicy(String key, String holder, Degradation cause) {
        byPolicy.countDegraded(cause);
        return policy == FailurePolicy.FALLBACK_LOCAL
                && byPolicy.local().inFlight().release(key, holder);
    }

    /** A renewal the store could not make, counted as degraded under {@code cause} (as an acquire is). */
    private boolean renewByPolicy(String key, String holder, Duration lease, Degradation cause) {
        byPolicy.countDegraded(cause);
        return switch (policy) {
            case FAIL_OPEN -> true;
            case FAIL_CLOSED -> false;
            case FALLBACK_LOCAL -> byPolicy.local().inFlight().renew(key, holder, lease);
        };
    }
}
