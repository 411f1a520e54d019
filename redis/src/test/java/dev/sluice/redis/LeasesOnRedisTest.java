package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.lease.LeasedRateLimiter;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Exact local leases over the real Redis store, many threads on one hot key asked far above its limit: takes are
 * asked ahead while callers spend (the store's I/O thread answers them) and callers that find nothing held go to the
 * store themselves, so this is where a monitor held across a store call would deadlock until the budget (it did:
 * every such call failed with TIMEOUT after 250 ms). Every call must be decided, never more admitted than one shared
 * limiter allows, and most of them without the store.
 */
class LeasesOnRedisTest {

    @Test
    void manyThreadsOnAHotKeyAreDecidedExactlyAndMostlyLocally() throws Exception {
        Limit limit = Limit.tokenBucket(20_000, Rate.perSecond(5_000)); // a take holds at most 100 (a horizon's refill)
        String key = "leases:" + UUID.randomUUID();
        int threads = 8;
        int callsEach = 50_000;
        LongAdder admitted = new LongAdder();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long start;
        long end;
        long storeCalls;
        try (LeasedRateLimiter leases = LeasedRateLimiter.over(
                RedisRateLimiter.create(RedisServer.shared().uri()))) {
            start = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < callsEach; i++) {
                        Decision d = leases.tryAcquire(key, limit);
                        if (d.allowed()) {
                            admitted.increment();
                        } else {
                            assertThat(d.retryAfterNanos()).isPositive();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(5, TimeUnit.MINUTES); // a hang guard only; a failed call fails the test here
            }
            end = System.nanoTime();
            storeCalls = leases.storeCalls();
        } finally {
            pool.shutdownNow();
        }
        long decisions = (long) threads * callsEach;
        // Redis's clock ran at most as long as this wall time between the first decision and the last
        long refilled = (long) Math.ceil(5_000 * ((end - start) / 1e9)) + 1;
        assertThat(admitted.sum())
                .as("admitted of %d decisions in %d ms", decisions, (end - start) / 1_000_000)
                .isLessThanOrEqualTo(20_000 + refilled);
        assertThat(admitted.sum())
                .as("the capacity at least is admitted, less what the node may hold")
                .isGreaterThanOrEqualTo(20_000 - 2 * 101);
        assertThat(storeCalls).as("store calls for %d decisions", decisions).isLessThan(decisions / 16);
    }
}
