package dev.sluice.tck;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;

/**
 * Leases decide some calls without their store, so they check arguments themselves: the suite's bad-input part, on
 * leases over the in-memory store (the rest of the suite does not apply: a leased decision's {@code remaining} is an
 * estimate).
 */
class LeasedBadInputTest implements BadInputTck {
    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return LeasedRateLimiter.builder(
                        InMemoryRateLimiter.builder().ticker(ticker).build())
                .ticker(ticker)
                .build();
    }
}
