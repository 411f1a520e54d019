package dev.sluice.postgres;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.LimitChangeTck;

/** LimitChangeTck against a real PostgreSQL (issue 29: the token bucket and GCRA so far; windows and log next). */
class PostgresLimitChangeTest implements LimitChangeTck {

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return TestDatabase.builder(TestDatabase.dataSource()).ticker(ticker).build();
    }
}
