package dev.sluice.spring;

import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisRateLimiter;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** The Redis store; a class of its own so that it is loaded only when sluice-redis is present. */
final class RedisStore {
    private RedisStore() {}

    static Supplier<RateLimiter> opener(String uri, @Nullable Duration budget) {
        try {
            RedisURI.create(uri); // a malformed URI fails startup, not every reconnection
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigException(
                    "sluice.store",
                    "'" + uri + "' is not a Redis URI (" + e.getMessage()
                            + "): write redis://host:6379, redis://:password@host:6379/0 or rediss:// for TLS");
        }
        return () -> {
            RedisRateLimiter.Builder b = RedisRateLimiter.builder(uri);
            if (budget != null) {
                b.timeBudget(budget); // every call returns or fails within this + RedisRateLimiter.SLACK
            }
            return b.build();
        };
    }
}
