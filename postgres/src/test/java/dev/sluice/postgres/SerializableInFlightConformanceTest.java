package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.tck.InFlightTck;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The slots in flight under {@code default_transaction_isolation = serializable}: a step that waited for the key's
 * head row fails with 40001 and is retried, so the maximum holds exactly (InFlightTck's concurrency test) and every
 * answer is the reference's.
 */
class SerializableInFlightConformanceTest implements InFlightTck {
    private static HikariDataSource serializable;

    @BeforeAll
    static void pool() {
        TestDatabase.dataSource();
        serializable = TestDatabase.pool("set default_transaction_isolation = serializable", 16);
    }

    @AfterAll
    static void close() {
        serializable.close();
    }

    @Override
    public RateLimiter newLimiter(Ticker ticker) {
        return PostgresRateLimiter.builder(serializable).ticker(ticker).build(); // every default, the budget included
    }

    @Override
    public int concurrencyRounds() {
        return 5;
    }
}
