package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Settling exactly: random sequences of reservations, settles and plain calls answer as {@link ReferenceRateLimiter}
 * does (decisions, settlements, and which calls are refused), and threads reserving and settling on one key leave
 * exactly the actual costs taken, each reservation settled once.
 */
public interface SettleExactnessTck extends StoreUnderTest {

    @Test
    default void randomReservationsAndSettlesAnswerExactlyLikeTheReference() {
        List<Limit> limits = List.of(
                Limit.tokenBucket(10, Rate.perSecond(3)),
                Limit.gcra(Rate.of(7, Duration.ofSeconds(2)), 4),
                Limit.fixedWindow(5, Duration.ofMillis(250)),
                Limit.slidingWindow(8, Duration.ofMillis(1300)),
                Limit.slidingLog(6, Duration.ofMillis(700)));
        long seed = System.nanoTime();
        for (Views v : Views.values()) {
            for (Limit limit : limits) {
                sequence(seed++, List.of(limit), v);
            }
            sequence(seed++, limits, v);
        }
    }

    private void sequence(long seed, List<Limit> limits, Views v) {
        SplittableRandom random = new SplittableRandom(seed);
        ManualTicker t = Tck.ticker();
        t.advanceNanos(random.nextLong(0, 1_000_000) * Tck.MICRO);
        String base = Tck.key("settle-diff");
        String[] keys = {base + ":a", base + ":b"};
        long maxWindow = limits.stream().mapToLong(Limit::periodNanos).max().orElseThrow();
        try (RateLimiter store = newLimiter(t);
                RateLimiter oracle = new ReferenceRateLimiter(t)) {
            for (int i = 0; i < differentialSteps(); i++) {
                int dice = random.nextInt(100);
                long micros = dice < 30
                        ? 0
                        : dice < 92
                                ? random.nextLong(0, maxWindow / 3000 + 1)
                                : random.nextLong(0, 3 * maxWindow / 1000 + 1);
                t.advanceNanos(micros * Tck.MICRO);
                Limit limit = limits.get(random.nextInt(limits.size()));
                String key = keys[random.nextInt(keys.length)];
                String id = "r" + random.nextInt(4);
                long cost = random.nextLong(1, limit.capacity() + 1);
                int op = random.nextInt(100);
                String what;
                Object expected;
                Object actual;
                if (op < 35) {
                    what = "tryAcquire(" + key + ", " + limit + ", " + cost + ")";
                    expected = oracle.tryAcquire(key, limit, cost);
                    actual = store.tryAcquire(key, limit, cost);
                } else if (op < 65) {
                    Duration within = Duration.ofNanos(random.nextLong(1, 2 * maxWindow / 1000 + 2) * Tck.MICRO);
                    what = "tryAcquireEstimate(" + key + ", " + limit + ", " + cost + ", " + id + ", " + within + ")";
                    expected = outcome(() -> oracle.tryAcquireEstimate(key, limit, cost, id, within));
                    actual = outcome(() -> v.reserve(store, key, limit, cost, id, within));
                } else if (op < 95) {
                    long spent = random.nextLong(0, limit.capacity() + 1);
                    what = "settle(" + key + ", " + limit + ", " + id + ", " + spent + ")";
                    expected = oracle.settle(key, limit, id, spent);
                    actual = v.settle(store, key, limit, id, spent);
                } else {
                    what = "peek(" + key + ", " + limit + ", " + cost + ")";
                    expected = oracle.peek(key, limit, cost);
                    actual = store.peek(key, limit, cost);
                }
                assertThat(actual)
                        .as("%s view, seed %d, step %d at T0+%d ns: %s", v, seed, i, t.read() - Tck.T0, what)
                        .isEqualTo(expected);
            }
        }
    }

    /** What a call answered, or the class of what it threw (a duplicate id is refused by both alike). */
    private static Object outcome(Supplier<?> call) {
        try {
            return Objects.requireNonNull(call.get());
        } catch (IllegalArgumentException e) {
            return IllegalArgumentException.class;
        }
    }

    /**
     * Threads reserve 3 and settle each reservation at 0 to 3 on one key, with time frozen, until a reservation is
     * denied; then what the key has taken is exactly the sum of the actual costs, on every algorithm.
     */
    @Test
    default void threadsReservingAndSettlingOnOneKeyTakeExactlyTheActualCosts() throws Exception {
        List<Limit> limits = List.of(
                Limit.tokenBucket(100, Rate.perHour(1)),
                Limit.gcra(Rate.perHour(1), 100),
                Limit.fixedWindow(100, Duration.ofHours(1)),
                Limit.slidingWindow(100, Duration.ofHours(1)),
                Limit.slidingLog(100, Duration.ofHours(1)));
        int threads = concurrencyThreads();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            for (int round = 0; round < Math.max(1, concurrencyRounds() / 4); round++) {
                for (Limit limit : limits) {
                    Views v = round % 2 == 0 ? Views.SYNC : Views.ASYNC;
                    String key = Tck.key("settle-hammer");
                    AtomicLong spent = new AtomicLong();
                    AtomicInteger reserved = new AtomicInteger();
                    AtomicInteger settled = new AtomicInteger();
                    CountDownLatch start = new CountDownLatch(1);
                    List<Future<?>> done = new ArrayList<>();
                    for (int i = 0; i < threads; i++) {
                        int thread = i;
                        done.add(pool.submit(() -> {
                            start.await();
                            for (int n = 0; ; n++) {
                                String id = thread + "-" + n;
                                if (!v.reserve(rl, key, limit, 3, id, Duration.ofHours(1))
                                        .allowed()) {
                                    return null;
                                }
                                reserved.incrementAndGet();
                                long actual = (thread + n) % 4L;
                                if (v.settle(rl, key, limit, id, actual).settled()) {
                                    settled.incrementAndGet();
                                    spent.addAndGet(actual);
                                }
                            }
                        }));
                    }
                    start.countDown();
                    for (Future<?> f : done) {
                        f.get(2, TimeUnit.MINUTES);
                    }
                    assertThat(settled.get())
                            .as("%s: each reservation settled", limit)
                            .isEqualTo(reserved.get());
                    assertThat(rl.peek(key, limit, 1).remaining())
                            .as("%s, round %d: %d reservations", limit, round, reserved.get())
                            .isEqualTo(100 - spent.get());
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Threads racing to settle the same reservations: each is settled exactly once, and charged once. */
    @Test
    default void racingSettlesOfOneReservationSettleItOnce() throws Exception {
        Limit limit = Limit.tokenBucket(100, Rate.perHour(1));
        int threads = Math.max(2, concurrencyThreads());
        int reservations = 40;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            for (int round = 0; round < Math.max(1, concurrencyRounds() / 4); round++) {
                Views v = round % 2 == 0 ? Views.SYNC : Views.ASYNC;
                String key = Tck.key("settle-race");
                for (int r = 0; r < reservations; r++) {
                    assertThat(v.reserve(rl, key, limit, 2, "r" + r, Duration.ofHours(1))
                                    .allowed())
                            .isTrue();
                }
                AtomicInteger settled = new AtomicInteger();
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    done.add(pool.submit(() -> {
                        start.await();
                        for (int r = 0; r < reservations; r++) {
                            if (v.settle(rl, key, limit, "r" + r, 1).settled()) {
                                settled.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES);
                }
                assertThat(settled.get()).as("round %d", round).isEqualTo(reservations);
                assertThat(rl.peek(key, limit, 1).remaining()).isEqualTo(100 - reservations);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
