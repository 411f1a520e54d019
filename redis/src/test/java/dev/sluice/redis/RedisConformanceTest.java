package dev.sluice.redis;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.RateLimiterTck;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;

/** The whole conformance suite, unchanged, against a real redis-server with a client ticker. */
class RedisConformanceTest implements RateLimiterTck {

    private static final ClientResources RESOURCES = DefaultClientResources.builder()
            .ioThreadPoolSize(2)
            .computationThreadPoolSize(2)
            .build();

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return RedisServer.shared()
                .limiter()
                .cluster(false)
                .clientResources(RESOURCES)
                .ticker(ticker)
                .build();
    }

    @Override
    public int concurrencyRounds() {
        return 3;
    }

    @AfterAll
    static void shutdown() throws Exception {
        RESOURCES.shutdown().get(10, TimeUnit.SECONDS);
    }
}
