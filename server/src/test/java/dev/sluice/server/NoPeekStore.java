package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;

/**
 * A store that decides like the one it wraps but whose {@code peek} throws {@link UnsupportedOperationException}:
 * what a third-party store without check-only support looks like to the service. Exercises the 501 /
 * UNIMPLEMENTED and combined-numbers fallbacks.
 */
final class NoPeekStore extends ForwardingStore {

    NoPeekStore(RateLimiter delegate) {
        super(delegate);
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        throw new UnsupportedOperationException("NoPeekStore does not support peek");
    }
}
