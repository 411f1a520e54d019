package dev.sluice.postgres;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.RateLimiterTck;

/**
 * The whole sluice-tck suite again with batching on: concurrent token-bucket and GCRA decisions travel
 * together in one statement, and every decision must still be exactly the reference's.
 */
class PostgresBatchingConformanceTest implements RateLimiterTck {

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return TestDatabase.builder(TestDatabase.dataSource()).ticker(ticker).batching(32, 2).build();
    }

    @Override
    public int concurrencyRounds() {
        return 3;
    }
}
