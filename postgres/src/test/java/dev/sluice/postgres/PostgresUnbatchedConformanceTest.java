package dev.sluice.postgres;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.RateLimiterTck;

/**
 * The whole sluice-tck suite (and issue 30's settle) again with {@code batching(false)}: every decision its own
 * statement, however concurrent (the default batches them: {@link PostgresConformanceTest}).
 */
class PostgresUnbatchedConformanceTest implements RateLimiterTck {

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return TestDatabase.builder(TestDatabase.dataSource())
                .ticker(ticker)
                .batching(false)
                .build();
    }

    @Override
    public int concurrencyRounds() {
        return 3;
    }
}
