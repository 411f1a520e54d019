package dev.sluice.postgres;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.RateLimiterTck;

/**
 * The whole sluice-tck suite (and issue 30's settle and work in flight), unchanged, against a real PostgreSQL, with
 * the defaults (batching on).
 */
class PostgresConformanceTest implements RateLimiterTck {

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return TestDatabase.builder(TestDatabase.dataSource()).ticker(ticker).build();
    }

    @Override
    public int concurrencyRounds() {
        return 5; // each round is hundreds of round trips; 5 rounds keep the module's tests lean on 2 cores
    }
}
