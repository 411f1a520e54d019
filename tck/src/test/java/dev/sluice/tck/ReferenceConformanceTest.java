package dev.sluice.tck;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;

/** The oracle must pass its own suite: the pinned scenarios check the pure steps themselves. */
class ReferenceConformanceTest implements RateLimiterTck {
    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return new ReferenceRateLimiter(ticker);
    }

    @Override
    public int concurrencyRounds() {
        return 3;
    }
}
