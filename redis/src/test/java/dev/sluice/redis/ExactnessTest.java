package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.tck.ReferenceRateLimiter;
import dev.sluice.tck.Tck;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The limits whose arithmetic is hardest for Lua's doubles: windows that are not whole microseconds
 * (the digit-by-digit division), windows of years, rates whose time unit is a tiny fraction of a
 * nanosecond, capacities whose backlog nears 2^62 units. Random sequences must decide exactly like the
 * pure steps, as in the TCK.
 */
class ExactnessTest {

    @Test
    void extremeLimitsDecideExactlyLikeThePureSteps() {
        List<Limit> limits = List.of(
                Limit.fixedWindow(7, Duration.ofNanos(1_234_567)),
                Limit.slidingWindow(9, Duration.ofNanos(1_000_000_001)),
                Limit.slidingWindow(1_000_000, Duration.ofNanos(604_800_000_000_001L)), // a week + 1 ns
                Limit.fixedWindow(3, Duration.ofDays(365 * 30)),
                Limit.slidingWindow(Integer.MAX_VALUE, Duration.ofDays(36_525)),
                Limit.slidingLog(5, Duration.ofNanos(2_000_999)),
                Limit.tokenBucket(5, Rate.of(999_999_937, Duration.ofSeconds(1))), // 1/999999937 ns units
                Limit.gcra(Rate.of(3, Duration.ofDays(36_525)), 4), // backlog of 133 years
                Limit.tokenBucket(4_000_000_000L, Rate.of(1, Duration.ofMillis(1))), // 2^62-ish units
                Limit.tokenBucket(4_000_000_000L, Rate.perSecond(1_000_000_000_007L)));
        long seed = System.nanoTime();
        for (Limit limit : limits) {
            run(seed++, List.of(limit), 250);
        }
        run(seed, limits, 300);
    }

    private static ManualTicker t() {
        return Tck.ticker();
    }

    private static void run(long seed, List<Limit> limits, int steps) {
        SplittableRandom random = new SplittableRandom(seed);
        ManualTicker t = Tck.ticker();
        t.advanceNanos(random.nextLong(0, 1_000_000_000_000L) * 1000);
        String base = "exact:" + UUID.randomUUID();
        String[] keys = {base + ":a", base + ":b"};
        try (RateLimiter store =
                        RedisServer.shared().limiter().cluster(false).ticker(t).build();
                RateLimiter oracle = new ReferenceRateLimiter(t)) {
            for (int i = 0; i < steps; i++) {
                Limit limit = limits.get(random.nextInt(limits.size()));
                long w = limit.periodNanos();
                int dice = random.nextInt(100);
                long step = dice < 25
                        ? 0
                        : dice < 60
                                ? random.nextLong(0, Math.max(2, w / limit.capacity() / 1000))
                                : dice < 90 ? random.nextLong(0, w / 3000 + 1) : random.nextLong(0, 3 * (w / 1000) + 1);
                t.advanceNanos(Math.min(step, 1_000_000_000_000L) * 1000); // at most ~11.6 days a step
                String key = keys[random.nextInt(keys.length)];
                long cost = 1
                        + (random.nextBoolean()
                                ? random.nextLong(0, Math.min(limit.capacity(), 3))
                                : random.nextLong(0, limit.capacity()));
                int op = random.nextInt(100);
                Decision expected;
                Decision actual;
                String what;
                if (op < 65) {
                    what = "tryAcquire(" + key + ", " + limit + ", " + cost + ")";
                    expected = oracle.tryAcquire(key, limit, cost);
                    actual = store.tryAcquire(key, limit, cost);
                } else if (op < 85 || !limit.algorithm().isTat()) {
                    List<Permit> permits = new ArrayList<>();
                    for (int j = random.nextInt(1, 4); j > 0; j--) {
                        Limit l = random.nextBoolean() ? limit : limits.get(random.nextInt(limits.size()));
                        permits.add(Permit.of(
                                keys[random.nextInt(keys.length)],
                                l,
                                1 + random.nextLong(0, Math.min(l.capacity(), 4))));
                    }
                    what = "tryAcquire(" + permits + ")";
                    expected = oracle.tryAcquire(permits);
                    actual = store.tryAcquire(permits);
                } else {
                    Duration maxWait =
                            Duration.ofNanos(random.nextLong(0, Math.min(w, 1L << 60) / 1000 * 3 + 1) * 1000);
                    what = "reserve(" + key + ", " + limit + ", " + cost + ", " + maxWait + ")";
                    expected = oracle.reserve(key, limit, cost, maxWait);
                    actual = store.reserve(key, limit, cost, maxWait);
                }
                assertThat(actual)
                        .as("seed %d, step %d at %d ns: %s", seed, i, t.read(), what)
                        .isEqualTo(expected);
            }
        }
    }

    @Test
    void limitsTheScriptsCannotComputeExactlyAreRejectedBeforeAnyCall() {
        try (RateLimiter rl =
                RedisServer.shared().limiter().cluster(false).ticker(t()).build()) {
            Limit odd = Limit.fixedWindow(5, Duration.ofNanos(2_000_000_000_000_001L)); // ~23 days + 1 ns
            assertThatThrownBy(() -> rl.tryAcquire("k", odd))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("2000000000000001 ns")
                    .hasMessageContaining("whole number of microseconds");
            Limit fine = Limit.tokenBucket(1, Rate.of(4_600_000_000_003L, Duration.ofNanos(1_000_000_001L)));
            assertThatThrownBy(() -> rl.tryAcquire("k", fine))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("time units per nanosecond");
        }
    }
}
