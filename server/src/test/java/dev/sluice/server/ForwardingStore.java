package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A store that decides as the one it wraps: tests override the one call they make misbehave. */
public class ForwardingStore implements RateLimiter {
    protected final RateLimiter delegate;

    public ForwardingStore(RateLimiter delegate) {
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
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        return delegate.reserve(key, limit, cost, maxWait);
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
    public Decision peek(String key, Limit limit, long cost) {
        return delegate.peek(key, limit, cost);
    }

    @Override
    public void reset(String key, Limit limit) {
        delegate.reset(key, limit);
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
