package dev.sluice.redis;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.BadInputTck;
import dev.sluice.tck.FixedWindowTck;
import dev.sluice.tck.GcraTck;
import dev.sluice.tck.PeekTck;
import dev.sluice.tck.ReserveTck;
import dev.sluice.tck.ResetTck;
import dev.sluice.tck.SlidingLogTck;
import dev.sluice.tck.SlidingWindowTck;
import dev.sluice.tck.TokenBucketTck;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import org.junit.jupiter.api.AfterAll;

/**
 * The conformance suite's single-key parts against the three-master cluster. (Its multi-permit parts
 * combine keys such as {@code tck:…:user} and {@code tck:…:ip}, which have no common hash tag and so live
 * in different slots: on a cluster those requests are rejected by design; RedisClusterTest checks
 * multi-permits with tagged keys instead.)
 */
class RedisClusterConformanceTest implements TokenBucketTck, GcraTck, FixedWindowTck, SlidingWindowTck,
        SlidingLogTck, ReserveTck, ResetTck, PeekTck, BadInputTck {

    private static final ClientResources RESOURCES = DefaultClientResources.builder().ioThreadPoolSize(2)
            .computationThreadPoolSize(2).build();

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return RedisRateLimiter.builder(RedisCluster.shared().uri()).cluster(true).clientResources(RESOURCES)
                .ticker(ticker).build();
    }

    @AfterAll
    static void shutdown() {
        RESOURCES.shutdown();
    }
}
