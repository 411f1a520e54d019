package dev.sluice.spring;

import dev.sluice.RateLimiter;
import dev.sluice.postgres.PostgresRateLimiter;
import dev.sluice.postgres.RetryPolicy;
import java.time.Duration;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The PostgreSQL / YugabyteDB store on the application's DataSource; a class of its own so that it is loaded only
 * when sluice-postgres is present. Its migrations run when it opens (idempotent), so the tables exist.
 */
final class PostgresStore {
    private PostgresStore() {}

    static Supplier<RateLimiter> opener(DataSource dataSource, @Nullable Duration budget) {
        return () -> {
            PostgresRateLimiter.Builder b = PostgresRateLimiter.builder(dataSource);
            if (budget != null) {
                // every decision returns or fails within this + PostgresRateLimiter.SLACK_MILLIS
                b.retryPolicy(RetryPolicy.DEFAULT.withBudget(budget));
            }
            PostgresRateLimiter pg = b.build();
            try {
                pg.migrate();
            } catch (RuntimeException e) {
                pg.close();
                throw e;
            }
            return pg;
        };
    }
}
