package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Random sequences of (time step, key, cost) run against the store and against
 * {@link ReferenceRateLimiter} (the pure steps); every decision must be identical. Steps are whole
 * microseconds, the precision every store keeps. The seed is in the failure message. The sequences run once through
 * the store's synchronous view and once, on a fresh store, through its asynchronous view ({@code tryAcquireAsync},
 * {@code peekAsync}, {@code reserveAsync}, {@code resetAsync}): both must decide exactly like the pure steps, so they
 * agree with each other. ({@link LimitChangeTck} runs the same sequences over named limits whose numbers change.)
 */
public interface DifferentialTck extends StoreUnderTest {

    @Test
    default void randomSequencesDecideExactlyLikeThePureSteps() {
        runAll(false);
    }

    @Test
    default void randomSequencesThroughTheAsyncViewDecideExactlyLikeThePureSteps() {
        runAll(true);
    }

    private void runAll(boolean async) {
        List<Limit> limits = List.of(
                Limit.tokenBucket(10, Rate.perSecond(3)),
                Limit.tokenBucket(1, Rate.of(7, Duration.ofMillis(10))),
                Limit.gcra(Rate.of(7, Duration.ofSeconds(2)), 4),
                Limit.fixedWindow(5, Duration.ofMillis(250)),
                Limit.slidingWindow(8, Duration.ofMillis(1300)),
                Limit.slidingWindow(1, Duration.ofMillis(3)),
                Limit.slidingLog(6, Duration.ofMillis(700)));
        long seed = System.nanoTime();
        for (Limit limit : limits) {
            sequence(this, seed++, List.of(limit), async);
        }
        sequence(this, seed, limits, async);
    }

    /**
     * One random sequence of {@link StoreUnderTest#differentialSteps()} calls over {@code limits} and three keys, on a
     * fresh store and on {@link ReferenceRateLimiter}, through the synchronous or the asynchronous view.
     */
    static void sequence(StoreUnderTest s, long seed, List<Limit> limits, boolean async) {
        SplittableRandom random = new SplittableRandom(seed);
        ManualTicker t = Tck.ticker();
        t.advanceNanos(random.nextLong(0, 1_000_000) * Tck.MICRO);
        String base = Tck.key("diff");
        String[] keys = {base + ":a", base + ":b", base + ":c"};
        long maxWindow = limits.stream().mapToLong(Limit::periodNanos).max().orElseThrow();
        try (RateLimiter store = s.newLimiter(t);
                RateLimiter oracle = new ReferenceRateLimiter(t)) {
            for (int i = 0; i < s.differentialSteps(); i++) {
                t.advanceNanos(Tck.randomStepMicros(random, maxWindow) * Tck.MICRO);
                Limit limit = limits.get(random.nextInt(limits.size()));
                String key = keys[random.nextInt(keys.length)];
                long cost = random.nextLong(1, limit.capacity() + 1);
                int op = random.nextInt(100);
                String what;
                Decision expected;
                Decision actual;
                if (op < 70) {
                    what = "tryAcquire(" + key + ", " + limit + ", " + cost + ")";
                    expected = oracle.tryAcquire(key, limit, cost);
                    actual =
                            async ? store.tryAcquireAsync(key, limit, cost).join() : store.tryAcquire(key, limit, cost);
                } else if (op < 80) {
                    what = "peek(" + key + ", " + limit + ", " + cost + ")";
                    expected = oracle.peek(key, limit, cost);
                    actual = async ? store.peekAsync(key, limit, cost).join() : store.peek(key, limit, cost);
                } else if (op < 90) {
                    List<Permit> permits = new ArrayList<>();
                    int n = 1 + random.nextInt(3);
                    for (int j = 0; j < n; j++) {
                        Limit l = limits.get(random.nextInt(limits.size()));
                        String k = keys[random.nextInt(keys.length)];
                        // one request names one state under one set of numbers
                        if (permits.stream()
                                .noneMatch(p -> p.key().equals(k)
                                        && p.limit().sameIdentity(l)
                                        && !p.limit().equals(l))) {
                            permits.add(Permit.of(k, l, random.nextLong(1, l.capacity() + 1)));
                        }
                    }
                    what = "tryAcquire(" + permits + ")";
                    expected = oracle.tryAcquire(permits);
                    actual = async ? store.tryAcquireAsync(permits).join() : store.tryAcquire(permits);
                } else if (op < 96 && limit.algorithm().isTat()) {
                    Duration maxWait = Duration.ofNanos(random.nextLong(0, 3 * limit.periodNanos() / 1000 + 1) * 1000);
                    what = "reserve(" + key + ", " + limit + ", " + cost + ", " + maxWait + ")";
                    expected = oracle.reserve(key, limit, cost, maxWait);
                    actual = async
                            ? store.reserveAsync(key, limit, cost, maxWait).join()
                            : store.reserve(key, limit, cost, maxWait);
                } else {
                    what = "reset(" + key + ", " + limit + ")";
                    oracle.reset(key, limit);
                    if (async) {
                        store.resetAsync(key, limit).join();
                    } else {
                        store.reset(key, limit);
                    }
                    continue;
                }
                assertThat(actual)
                        .as(
                                "%s view, seed %d, step %d at T0+%d ns: %s",
                                async ? "async" : "sync", seed, i, t.read() - Tck.T0, what)
                        .isEqualTo(expected);
            }
        }
    }
}
