package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Exactness under contention: with time frozen, threads hammering one key admit exactly the capacity,
 * never one more; multi-permit requests racing single ones never leave a partial take.
 */
public interface ConcurrencyTck extends StoreUnderTest {

    @Test
    default void hammeringOneKeyAdmitsExactlyTheCapacity() throws Exception {
        List<Limit> limits = Tck.everyAlgorithmPerHour(100);
        int threads = concurrencyThreads();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            for (int round = 0; round < concurrencyRounds(); round++) {
                for (Limit limit : limits) {
                    String key = Tck.key("hammer");
                    AtomicLong admitted = new AtomicLong();
                    CountDownLatch start = new CountDownLatch(1);
                    List<Future<?>> done = new ArrayList<>();
                    int cost = 1 + round % 3;
                    int attempts = (int) (2 * limit.capacity() / cost / threads) + 5;
                    for (int i = 0; i < threads; i++) {
                        done.add(pool.submit(() -> {
                            start.await();
                            for (int a = 0; a < attempts; a++) {
                                if (rl.tryAcquire(key, limit, cost).allowed()) {
                                    admitted.addAndGet(cost);
                                }
                            }
                            return null;
                        }));
                    }
                    start.countDown();
                    for (Future<?> f : done) {
                        f.get(2, TimeUnit.MINUTES);
                    }
                    assertThat(admitted.get())
                            .as("%s, cost %d, round %d", limit, cost, round)
                            .isEqualTo(limit.capacity() / cost * cost);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    default void multiPermitUnderContentionNeverTakesPartially() throws Exception {
        Limit a = Limit.tokenBucket(60, Rate.perHour(1));
        Limit b = Limit.fixedWindow(40, Duration.ofHours(1));
        int threads = Math.max(3, concurrencyThreads());
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        ManualTicker ticker = Tck.ticker();
        try (RateLimiter rl = newLimiter(ticker)) {
            for (int round = 0; round < concurrencyRounds(); round++) {
                String base = Tck.key("multi-race");
                String ka = base + ":a";
                String kb = base + ":b";
                AtomicInteger multi = new AtomicInteger();
                AtomicInteger onlyA = new AtomicInteger();
                AtomicInteger onlyB = new AtomicInteger();
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    int role = i % 3;
                    done.add(pool.submit(() -> {
                        start.await();
                        while (true) {
                            boolean ok = switch (role) {
                                case 0 ->
                                    rl.tryAcquire(List.of(Permit.of(ka, a), Permit.of(kb, b)))
                                            .allowed();
                                case 1 -> rl.tryAcquire(ka, a).allowed();
                                default -> rl.tryAcquire(kb, b).allowed();
                            };
                            if (!ok) {
                                return null;
                            }
                            (role == 0 ? multi : role == 1 ? onlyA : onlyB).incrementAndGet();
                        }
                    }));
                }
                start.countDown();
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES);
                }
                // every single-key worker stopped on a denial, so both keys are exhausted: what they hold
                // was taken by admitted requests and nothing else
                assertThat(multi.get() + onlyA.get())
                        .as("A consumed, round %d", round)
                        .isEqualTo(60);
                assertThat(multi.get() + onlyB.get())
                        .as("B consumed, round %d", round)
                        .isEqualTo(40);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
