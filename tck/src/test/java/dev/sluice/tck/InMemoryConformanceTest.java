package dev.sluice.tck;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;

/** The in-memory store passes the whole suite. */
class InMemoryConformanceTest implements RateLimiterTck {
    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return InMemoryRateLimiter.builder().ticker(ticker).build();
    }
}
