package dev.sluice.redis;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.RateLimiterTck;

/** The whole conformance suite with {@code batching(false)}: one {@code EVALSHA} per decision, however concurrent. */
class RedisUnbatchedConformanceTest implements RateLimiterTck {

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return RedisServer.shared()
                .limiter()
                .cluster(false)
                .batching(false)
                .ticker(ticker)
                .build();
    }

    @Override
    public int concurrencyRounds() {
        return 3;
    }
}
