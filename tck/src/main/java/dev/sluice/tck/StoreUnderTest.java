package dev.sluice.tck;

import dev.sluice.RateLimiter;
import dev.sluice.Ticker;

/**
 * What a store gives the conformance suite: a limiter that takes its time from the given ticker
 * (epoch nanoseconds), as every store's builder allows for exactly this purpose.
 *
 * <p>A store's test class implements {@link RateLimiterTck} (all of the suite) and this one method:
 * <pre>{@code
 * class RedisConformanceTest implements RateLimiterTck {
 *     public RateLimiter newLimiter(Ticker ticker) {
 *         return RedisRateLimiter.builder(uri).ticker(ticker).build();
 *     }
 * }
 * }</pre>
 * Every test closes the limiters it creates and uses keys of its own ({@link Tck#key(String)}), so a
 * remote store can be shared by all tests without cleanup.
 */
public interface StoreUnderTest {

    RateLimiter newLimiter(Ticker ticker);

    /** How many times each concurrency proof is repeated; remote stores may lower it. */
    default int concurrencyRounds() {
        return 20;
    }

    /** Threads per concurrency proof. */
    default int concurrencyThreads() {
        return 8;
    }

    /** Steps per randomized differential run. */
    default int differentialSteps() {
        return 400;
    }
}
