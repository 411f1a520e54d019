package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A store that decides as the one it wraps: a test extends it and overrides only the calls it makes misbehave or
 * observes (a store that is down, one without peek or without slots, one that counts its settles).
 *
 * <p>Every store operation is forwarded, the synchronous form and the asynchronous one alike: a subclass that
 * changes a call overrides both forms its test reaches. The calls {@link RateLimiter} composes from the others keep
 * the interface's defaults, so they go through this wrapper and see a subclass's overrides: the one-permit
 * overloads, {@link #tryAcquireEach} and its async form (a store without peek answers the combined decision only),
 * and {@link #bind} (the bound calls are this wrapper's keyed ones).
 */
public class ForwardingRateLimiter implements RateLimiter {
    /** The store every call is forwarded to. */
    protected final RateLimiter delegate;

    public ForwardingRateLimiter(RateLimiter delegate) {
        this.delegate = delegate;
    }

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        return delegate.tryAcquire(key, limit, cost);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        return delegate.tryAcquireAsync(key, limit, cost);
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        return delegate.tryAcquire(permits);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
        return delegate.tryAcquireAsync(permits);
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        return delegate.reserve(key, limit, cost, maxWait);
    }

    @Override
    public CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
        return delegate.reserveAsync(key, limit, cost, maxWait);
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        return delegate.peek(key, limit, cost);
    }

    @Override
    public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        return delegate.peekAsync(key, limit, cost);
    }

    @Override
    public void reset(String key, Limit limit) {
        delegate.reset(key, limit);
    }

    @Override
    public CompletableFuture<Void> resetAsync(String key, Limit limit) {
        return delegate.resetAsync(key, limit);
    }

    @Override
    public Decision tryAcquireEstimate(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        return delegate.tryAcquireEstimate(key, limit, estimate, reservation, settleWithin);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        return delegate.tryAcquireEstimateAsync(key, limit, estimate, reservation, settleWithin);
    }

    @Override
    public Settlement settle(String key, Limit limit, String reservation, long actual) {
        return delegate.settle(key, limit, reservation, actual);
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String reservation, long actual) {
        return delegate.settleAsync(key, limit, reservation, actual);
    }

    @Override
    public InFlightLimiter inFlight() {
        return delegate.inFlight();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
