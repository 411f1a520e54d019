package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.tck.ForwardingRateLimiter;
import java.util.concurrent.CompletableFuture;

/**
 * A store that decides like the one it wraps but whose {@code peek} throws {@link UnsupportedOperationException}:
 * what a third-party store without check-only support looks like to the service. Exercises the 501 /
 * UNIMPLEMENTED and combined-numbers fallbacks.
 */
final class NoPeekStore extends ForwardingRateLimiter {

    NoPeekStore(RateLimiter delegate) {
        super(delegate);
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        throw new UnsupportedOperationException("NoPeekStore does not support peek");
    }

    /** The interface's default, as such a store keeps it: it peeks synchronously, so it throws at once. */
    @Override
    public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        return CompletableFuture.completedFuture(peek(key, limit, cost));
    }
}
