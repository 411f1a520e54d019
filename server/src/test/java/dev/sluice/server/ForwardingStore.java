package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
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
    public Decision peek(String key, Limit limit, long cost) {
        return delegate.peek(key, limit, cost);
    }

    @Override
    public void reset(String key, Limit limit) {
        delegate.reset(key, limit);
    }

    @Override
    public void close() {
        delegate.close();
    }
}
