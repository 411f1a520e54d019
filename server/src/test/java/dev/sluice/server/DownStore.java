package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A store that is down: every decision fails, as over a refused connection. */
public class DownStore implements RateLimiter {
    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        throw new IllegalStateException("connection refused");
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        throw new IllegalStateException("connection refused");
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        throw new IllegalStateException("connection refused");
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        throw new IllegalStateException("connection refused");
    }

    @Override
    public void reset(String key, Limit limit) {}

    @Override
    public void close() {}
}
