package dev.sluice.tck;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.memory.InMemoryRateLimiter;

/**
 * A {@link FailSafeRateLimiter} in front of a healthy store is invisible: the whole suite passes through it,
 * with the strictest policy so that a stray degraded decision would show up as a wrong denial.
 */
class FailSafeConformanceTest implements RateLimiterTck {
    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return FailSafeRateLimiter.builder(
                        InMemoryRateLimiter.builder().ticker(ticker).build())
                .policy(FailurePolicy.FAIL_CLOSED)
                .ticker(ticker)
                .build();
    }
}
