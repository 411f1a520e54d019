package dev.sluice.postgres;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.InFlightTck;

/**
 * The slots in flight under {@code default_transaction_isolation = serializable}: a step that waited for the key's
 * head row fails with 40001 and is retried, so the maximum holds exactly (InFlightTck's concurrency test) and every
 * answer is the reference's.
 */
class SerializableInFlightConformanceTest implements InFlightTck {
    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return PostgresRateLimiter.builder(TestDatabase.serializable())
                .ticker(ticker)
                .build(); // every default, the budget included
    }

    @Override
    public int concurrencyRounds() {
        return 5;
    }
}
