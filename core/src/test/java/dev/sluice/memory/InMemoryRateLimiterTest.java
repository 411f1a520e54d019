package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
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
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

class InMemoryRateLimiterTest {
    private static final long T0 = 1_767_225_600L * 1_000_000_000L;

    @Test
    void aFloodOfRandomKeysNeverTracksMoreThanMaxKeys() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.tokenBucket(5, Rate.perHour(1));
        try (InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(1000).build()) {
            for (int i = 0; i < 200_000; i++) {
                assertThat(rl.tryAcquire("flood-" + i, l).allowed()).isTrue();
            }
            assertThat(rl.trackedKeys()).isLessThanOrEqualTo(1000).isGreaterThan(500);
        }
    }

    @Test
    void freshKeysAreEvictedBeforeKeysThatCarryState() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit slow = Limit.tokenBucket(3, Rate.perHour(1));
        Limit fast = Limit.tokenBucket(3, Rate.perSecond(1000));
        try (InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(64).build()) {
            assertThat(rl.tryAcquire("important", slow, 3).allowed()).isTrue();
            for (int round = 0; round < 100; round++) {
                for (int i = 0; i < 20; i++) {
                    rl.tryAcquire("visitor-" + round + "-" + i, fast);
                }
                t.advance(Duration.ofMillis(5)); // every visitor bucket is full again: fresh, evictable
            }
            assertThat(rl.trackedKeys()).isLessThanOrEqualTo(64);
            Decision d = rl.tryAcquire("important", slow);
            assertThat(d.allowed()).as("the exhausted key was not forgotten").isFalse();
            assertThat(d.retryAfterNanos())
                    .isEqualTo(Duration.ofHours(1).toNanos()
                            - Duration.ofMillis(500).toNanos());
        }
    }

    @Test
    void whenNothingIsFreshTheKeysClosestToFreshGoFirst() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        try (InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(16).build()) {
            assertThat(rl.tryAcquire("deep", l, 10).allowed()).isTrue(); // 10 s from fresh
            for (int i = 0; i < 200; i++) {
                rl.tryAcquire("shallow-" + i, l, 1); // 1 s from fresh each
            }
            assertThat(rl.trackedKeys()).isLessThanOrEqualTo(16);
            assertThat(rl.tryAcquire("deep", l).allowed()).as("deep key kept").isFalse();
        }
    }

    @Test
    void aKeyIdleLongerThanTheWrapHorizonIsReadAsFresh() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        // 999,983 is prime: time is counted in 1/999,983 ns, so 2^63 units pass in about 2.5 hours
        Limit l = Limit.tokenBucket(999_983, Rate.perSecond(999_983));
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.builder().ticker(t).build()) {
            assertThat(rl.tryAcquire("k", l, 999_983).allowed()).isTrue();
            assertThat(rl.tryAcquire("k", l).allowed()).isFalse();
            t.advance(Duration.ofHours(10));
            assertThat(rl.tryAcquire("k", l, 999_983).allowed()).isTrue();
            t.advance(Duration.ofHours(7));
            assertThat(rl.tryAcquire("k", l, 999_983)).isEqualTo(new Decision(true, 999_983, 0, 0, 1_000_000_000L));
        }
    }

    @Test
    void aFixedWindowKeyIdleForExactly2To32WindowsIsNotReadAsTheSameWindow() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.fixedWindow(1, Duration.ofMillis(1));
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.builder().ticker(t).build()) {
            assertThat(rl.tryAcquire("k", l).allowed()).isTrue();
            t.advanceNanos((1L << 32) * 1_000_000L);
            assertThat(rl.tryAcquire("k", l).allowed()).isTrue();
        }
    }

    @Test
    void resetForgetsTheKeyAndFreesItsSlot() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.slidingLog(2, Duration.ofMinutes(1));
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.builder().ticker(t).build()) {
            rl.tryAcquire("k", l, 2);
            assertThat(rl.trackedKeys()).isEqualTo(1);
            rl.reset("k", l);
            assertThat(rl.trackedKeys()).isZero();
            assertThat(rl.tryAcquire("k", l, 2).allowed()).isTrue();
        }
    }

    @RepeatedTest(5)
    void decisionsStayExactWhileTablesAreRebuiltAndKeysEvicted() throws Exception {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit hot = Limit.tokenBucket(500, Rate.perHour(1));
        Limit window = Limit.slidingWindow(300, Duration.ofHours(1));
        Limit churn = Limit.tokenBucket(1, Rate.perSecond(1));
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try (InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(4096).build()) {
            AtomicLong hotAdmitted = new AtomicLong();
            AtomicLong windowAdmitted = new AtomicLong();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 400; i++) {
                        if (rl.tryAcquire("hot", hot).allowed()) {
                            hotAdmitted.incrementAndGet();
                        }
                        if (rl.tryAcquire("window", window).allowed()) {
                            windowAdmitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (int w = 0; w < 2; w++) {
                int id = w;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        rl.tryAcquire("churn-" + id + "-" + i, churn); // forces growth, rebuilds, evictions
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(1, TimeUnit.MINUTES);
            }
            assertThat(hotAdmitted.get()).isEqualTo(500);
            assertThat(windowAdmitted.get()).isEqualTo(300);
            assertThat(rl.trackedKeys()).isLessThanOrEqualTo(4096);
        } finally {
            pool.shutdownNow();
        }
    }

    @RepeatedTest(5)
    void multiPermitStaysAllOrNothingWhileTablesAreRebuilt() throws Exception {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit a = Limit.gcra(Rate.perHour(1), 80);
        Limit b = Limit.slidingLog(50, Duration.ofHours(1));
        Limit churn = Limit.fixedWindow(1, Duration.ofSeconds(1));
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try (InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(1 << 16).build()) {
            AtomicInteger multi = new AtomicInteger();
            AtomicInteger onlyA = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            done.add(pool.submit(() -> {
                start.await();
                while (rl.tryAcquire(List.of(Permit.of("a", a), Permit.of("b", b)))
                        .allowed()) {
                    multi.incrementAndGet();
                }
                return null;
            }));
            done.add(pool.submit(() -> {
                start.await();
                while (rl.tryAcquire(List.of(Permit.of("b", b), Permit.of("a", a)))
                        .allowed()) {
                    multi.incrementAndGet();
                }
                return null;
            }));
            done.add(pool.submit(() -> {
                start.await();
                while (rl.tryAcquire("a", a).allowed()) {
                    onlyA.incrementAndGet();
                }
                return null;
            }));
            for (int w = 0; w < 2; w++) {
                int id = w;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 20_000; i++) {
                        rl.tryAcquire("churn-" + id + "-" + i, churn);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(1, TimeUnit.MINUTES);
            }
            assertThat(multi.get()).isLessThanOrEqualTo(50);
            assertThat(multi.get() + onlyA.get()).isEqualTo(80);
            // b was only ever taken together with a: exactly `multi` permits of it are gone
            Decision probe = rl.tryAcquire("b", b);
            assertThat(probe.allowed()).isEqualTo(multi.get() < 50);
            assertThat(probe.remaining()).isEqualTo(Math.max(0, 50 - multi.get() - 1));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void tooManyDistinctLimitsIsAClearError() {
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.create()) {
            assertThatThrownBy(() -> {
                        for (int i = 1; i <= InMemoryRateLimiter.MAX_LIMITS + 1; i++) {
                            rl.tryAcquire("k", Limit.tokenBucket(i, Rate.perSecond(1)));
                        }
                    })
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("create limits once");
        }
    }

    @Test
    void aRejectedCallRegistersNoLimit() {
        // a limit once registered counts against MAX_LIMITS for good: were rejected calls to register theirs, this
        // many of them would leave no room for one more limit
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.create()) {
            for (int i = 1; i <= InMemoryRateLimiter.MAX_LIMITS; i++) {
                Limit l = Limit.tokenBucket(i, Rate.perSecond(1));
                long tooMuch = i + 1L;
                String key = i % 3 == 0 ? "" : i % 3 == 1 ? "k".repeat(4097) : null;
                assertThatThrownBy(() -> rl.bind(key, l))
                        .isInstanceOf(key == null ? NullPointerException.class : IllegalArgumentException.class)
                        .hasMessageStartingWith("key ");
                assertThatThrownBy(() -> rl.reserve(key, l, 1, Duration.ZERO)).hasMessageStartingWith("key ");
                assertThatThrownBy(() -> rl.tryAcquire("k", l, tooMuch)).hasMessageContaining("exceeds capacity");
            }
            Limit another = Limit.tokenBucket(1, Rate.perMinute(1));
            assertThat(rl.bind("k", another).tryAcquire().allowed()).isTrue();
            assertThat(rl.tryAcquire("k", Limit.tokenBucket(2, Rate.perMinute(1)))
                            .allowed())
                    .isTrue();
        }
    }

    @Test
    void badBuilderArgumentsAreRejected() {
        assertThatThrownBy(() -> InMemoryRateLimiter.builder().maxKeys(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxKeys 0");
        assertThatThrownBy(() -> InMemoryRateLimiter.builder().ticker(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("ticker");
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.create()) {
            Limit l = Limit.tokenBucket(1, Rate.perSecond(1));
            assertThatThrownBy(() -> rl.reserve("k", l, 1, Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("negative");
        }
    }
}
