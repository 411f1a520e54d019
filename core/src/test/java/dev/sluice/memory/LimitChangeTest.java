package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.BoundLimit;
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
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * The in-memory store's side of a limit whose numbers change (the conformance suite's {@code LimitChangeTck} covers
 * the decisions): a key's state read under other numbers moves to a new slot, so deciders racing the change on the
 * old slot neither lose an admission nor land one under the wrong numbers; handles and multi-permit requests meet
 * the change as keyed calls do.
 */
class LimitChangeTest {

    /**
     * Threads deciding one key under two sets of numbers at once: with one window length or rate, and a frozen clock,
     * what was spent carries over exactly both ways, so every admission is counted once whatever the interleaving.
     */
    @RepeatedTest(10)
    void racingCallsUnderTwoSetsOfNumbersLoseNoAdmission() throws Exception {
        for (Duration window : List.of(Duration.ofHours(1))) {
            checkNoAdmissionLost(Limit.fixedWindow(100, window), Limit.fixedWindow(150, window));
            checkNoAdmissionLost(Limit.slidingWindow(100, window), Limit.slidingWindow(150, window));
            Rate rate = Rate.of(1, window);
            checkNoAdmissionLost(Limit.tokenBucket(100, rate), Limit.tokenBucket(150, rate));
            checkNoAdmissionLost(Limit.gcra(rate, 100), Limit.gcra(rate, 150));
        }
    }

    private static void checkNoAdmissionLost(Limit small, Limit large) throws Exception {
        Limit l1 = small.named("racing");
        Limit l2 = large.named("racing");
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L + 1_000);
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.builder().ticker(t).build()) {
            AtomicInteger admitted = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                Limit mine = i % 2 == 0 ? l1 : l2;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int call = 0; call < 60; call++) {
                        if (rl.tryAcquire("k", mine).allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            int rest = 0;
            while (rl.tryAcquire("k", l2).allowed()) {
                rest++;
            }
            assertThat(admitted.get() + rest)
                    .as("%s: every admission counted once", l2)
                    .isEqualTo(150);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aHandleAndAMultiPermitRequestReadTheKeyUnderTheirOwnNumbers() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        Limit l1 = Limit.tokenBucket(10, Rate.perSecond(1)).named("api");
        Limit l2 = Limit.tokenBucket(4, Rate.perSecond(1)).named("api");
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.builder().ticker(t).build()) {
            BoundLimit bound = rl.bind("k", l1);
            for (int i = 0; i < 6; i++) {
                assertThat(bound.tryAcquirePermit()).isTrue();
            }
            // 6 spent: 4 − 6 < 0 under l2; the handle then reads the key under l1 again, 6 spent
            assertThat(rl.tryAcquire("k", l2).allowed()).isFalse();
            int n = 0;
            while (bound.tryAcquirePermit()) {
                n++;
            }
            assertThat(n).as("10 − 6 through the handle").isEqualTo(4);
            t.advance(Duration.ofSeconds(2));
            assertThat(rl.tryAcquire(List.of(Permit.of("k", l2), Permit.of("other", l1)))
                            .allowed())
                    .as("2 refilled under l1, read under l2 as 4 − (10 − 2)")
                    .isFalse();
            assertThat(rl.tryAcquire(List.of(Permit.of("k", l1), Permit.of("k", l2)))
                            .allowed())
                    .as("one identity under two sets of numbers in one request")
                    .isFalse();
            t.advance(Duration.ofSeconds(10));
            assertThat(rl.tryAcquire(List.of(Permit.of("k", l1, 2), Permit.of("k", l2, 2)))
                            .allowed())
                    .isTrue();
            assertThat(rl.peek("k", l2, 1).remaining()).as("4 − 2 − 2").isZero();
        }
    }
}
