package dev.sluice.postgres;

import dev.sluice.RateLimiter;
import java.util.function.Function;

/** The limiter of an {@code InFlightChild} process: on the database at the given JDBC URL, on its clock. */
public final class PostgresChildLimiter implements Function<String, RateLimiter> {
    @Override
    public RateLimiter apply(String jdbcUrl) {
        return PostgresRateLimiter.builder(jdbcUrl)
                .threads(8)
                .retryPolicy(TestDatabase.GENEROUS)
                .build();
    }
}
