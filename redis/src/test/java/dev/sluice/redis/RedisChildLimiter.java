package dev.sluice.redis;

import dev.sluice.RateLimiter;
import java.util.function.Function;

/** The limiter of an {@code InFlightChild} process: on the Redis at the given URI, on Redis's clock. */
public final class RedisChildLimiter implements Function<String, RateLimiter> {
    @Override
    public RateLimiter apply(String uri) {
        return RedisRateLimiter.builder(uri)
                .cluster(false)
                .timeBudget(RedisServer.GENEROUS_BUDGET)
                .connectTimeout(RedisServer.GENEROUS_CONNECT)
                .build();
    }
}
