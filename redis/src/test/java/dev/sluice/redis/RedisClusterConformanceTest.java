package dev.sluice.redis;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.RateLimiterTck;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole conformance suite against the three-master cluster. The suite's keys carry a hash tag
 * ({@code tck:{…}:name}), so the keys one multi-permit request combines share a slot, as the {@code {tag}}
 * convention asks; RedisClusterTest adds untagged keys spread over every master.
 */
class RedisClusterConformanceTest implements RateLimiterTck {

    private static final ClientResources RESOURCES = DefaultClientResources.builder()
            .ioThreadPoolSize(2)
            .computationThreadPoolSize(2)
            .build();

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return RedisRateLimiter.builder(RedisCluster.shared().uri())
                .timeBudget(RedisServer.GENEROUS_BUDGET)
                .cluster(true)
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
