package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A named limit whose numbers change keeps the key's state ({@link Limit#identity()}), read under the new numbers as
 * {@link dev.sluice.algorithm.Inheritance} says: what was spent carries over. Each scenario exhausts a key under L1,
 * switches to a tighter L2 of the same name (denied until what was spent has refilled under L2) and then to a looser
 * L3 (at most L3 minus what was spent), counting admissions exactly; each runs through the synchronous and the
 * asynchronous view. A new name, or a reset, starts fresh; unnamed limits are identified by their numbers. Random
 * sequences over named limits whose numbers change between calls must decide exactly as {@link ReferenceRateLimiter}.
 */
public interface LimitChangeTck extends StoreUnderTest {

    @Test
    default void aTokenBucketTightenedOrLoosenedKeepsWhatWasSpent() {
        for (boolean async : new boolean[] {false, true}) {
            bucketScenario(async, "tb", (c, r) -> Limit.tokenBucket(c, r));
        }
    }

    @Test
    default void aGcraLimitTightenedOrLoosenedKeepsWhatWasSpent() {
        for (boolean async : new boolean[] {false, true}) {
            bucketScenario(async, "gcra", (c, r) -> Limit.gcra(r, c));
        }
    }

    /** A bucket of capacity c refilled at r. */
    interface Bucket {
        Limit of(long capacity, Rate refill);
    }

    private void bucketScenario(boolean async, String name, Bucket bucket) {
        ManualTicker t = Tck.ticker();
        String k = Tck.key("change-" + name);
        Limit l1 = bucket.of(10, Rate.perSecond(10)).named(name);
        Limit l2 = bucket.of(4, Rate.perSecond(2)).named(name); // T' = 500 ms
        Limit l3 = bucket.of(20, Rate.perSecond(10)).named(name);
        try (RateLimiter rl = newLimiter(t)) {
            View v = new View(rl, async);
            assertThat(v.drain(k, l1)).as("%s: L1's burst", v).isEqualTo(10);
            // tightened: 10 spent at 500 ms each is 5 s of backlog against L2's bucket of 2 s
            Decision denied = v.acquire(k, l2);
            assertThat(denied.allowed()).as("%s: no burst after tightening", v).isFalse();
            assertThat(denied.retryAfterNanos())
                    .as("%s: until 7 of the 10 have refilled at L2's rate", v)
                    .isEqualTo(Tck.ms(3_500));
            assertThat(v.peek(k, l2).allowed()).as("%s: peek agrees", v).isFalse();
            assertThat(v.all(List.of(Permit.of(k, l2))))
                    .as("%s: multi-permit agrees", v)
                    .isFalse();
            t.advance(Duration.ofMillis(3_499));
            assertThat(v.drain(k, l2)).as("%s: 1 ms early", v).isZero();
            t.advance(Duration.ofMillis(1));
            assertThat(v.drain(k, l2)).as("%s: one token after 3.5 s", v).isEqualTo(1);
            t.advance(Duration.ofSeconds(10));
            assertThat(v.drain(k, l2)).as("%s: L2's capacity once refilled", v).isEqualTo(4);
            // loosened: spent 4 under L2, so 20 − 4
            assertThat(v.drain(k, l3)).as("%s: L3 minus what was spent", v).isEqualTo(16);
            t.advance(Duration.ofSeconds(1));
            assertThat(v.drain(k, l3)).as("%s: L3's refill", v).isEqualTo(10);
            // back to L2 with a reservation: 20 spent is 10 s of backlog under L2, 8.5 s more than its bucket allows
            Decision reserved = v.reserve(k, l2, Duration.ofSeconds(10));
            assertThat(reserved.allowed()).isTrue();
            assertThat(reserved.retryAfterNanos())
                    .as("%s: reserved under L2", v)
                    .isEqualTo(Tck.ms(8_500));
            // starting fresh: a new name, or a reset
            assertThat(v.drain(k, bucket.of(4, Rate.perSecond(2)).named(name + "-new")))
                    .as("%s: a new name is a new state", v)
                    .isEqualTo(4);
            v.reset(k, l1);
            assertThat(v.drain(k, l2))
                    .as("%s: reset under any numbers of the name", v)
                    .isEqualTo(4);
        }
    }

    @Test
    default void randomSequencesUnderChangingNumbersDecideExactlyLikeThePureSteps() {
        long seed = System.nanoTime();
        for (boolean async : new boolean[] {false, true}) {
            for (List<Limit> named : List.of(
                    List.of(
                            Limit.tokenBucket(10, Rate.perSecond(3)).named("d-tb"),
                            Limit.tokenBucket(4, Rate.of(7, Duration.ofMillis(10)))
                                    .named("d-tb"),
                            Limit.tokenBucket(25, Rate.of(2, Duration.ofSeconds(3)))
                                    .named("d-tb")),
                    List.of(
                            Limit.gcra(Rate.of(7, Duration.ofSeconds(2)), 4).named("d-g"),
                            Limit.gcra(Rate.perSecond(9), 12).named("d-g")),
                    List.of(
                            Limit.fixedWindow(5, Duration.ofMillis(250)).named("d-fw"),
                            Limit.fixedWindow(9, Duration.ofMillis(250)).named("d-fw"),
                            Limit.fixedWindow(3, Duration.ofMillis(700)).named("d-fw")),
                    List.of(
                            Limit.slidingWindow(8, Duration.ofMillis(1300)).named("d-sw"),
                            Limit.slidingWindow(3, Duration.ofMillis(1300)).named("d-sw"),
                            Limit.slidingWindow(6, Duration.ofMillis(400)).named("d-sw")),
                    List.of(
                            Limit.slidingLog(6, Duration.ofMillis(700)).named("d-sl"),
                            Limit.slidingLog(3, Duration.ofMillis(200)).named("d-sl"),
                            Limit.slidingLog(9, Duration.ofMillis(1100)).named("d-sl")))) {
                DifferentialTck.sequence(this, seed++, named, async);
            }
        }
    }

    @Test
    default void unnamedLimitsWithOtherNumbersAreIndependent() {
        ManualTicker t = Tck.ticker();
        String k = Tck.key("change-unnamed");
        try (RateLimiter rl = newLimiter(t)) {
            View v = new View(rl, false);
            assertThat(v.drain(k, Limit.tokenBucket(5, Rate.perMinute(1)))).isEqualTo(5);
            assertThat(v.drain(k, Limit.tokenBucket(3, Rate.perMinute(1)))).isEqualTo(3);
            assertThat(v.drain(k, Limit.tokenBucket(5, Rate.perMinute(1)))).isZero();
        }
    }

    @Test
    default void aFixedWindowTightenedOrLoosenedKeepsItsCount() {
        for (boolean async : new boolean[] {false, true}) {
            ManualTicker t = Tck.ticker();
            String k = Tck.key("change-fw");
            Limit l1 = Limit.fixedWindow(10, Duration.ofMinutes(1)).named("fw");
            Limit l2 = Limit.fixedWindow(4, Duration.ofMinutes(1)).named("fw");
            Limit l3 = Limit.fixedWindow(25, Duration.ofMinutes(1)).named("fw");
            try (RateLimiter rl = newLimiter(t)) {
                View v = new View(rl, async);
                t.advance(Duration.ofSeconds(10));
                assertThat(v.drain(k, l1)).as("%s", v).isEqualTo(10);
                Decision denied = v.acquire(k, l2);
                assertThat(denied.allowed()).as("%s: tightened", v).isFalse();
                assertThat(denied.retryAfterNanos())
                        .as("%s: until the window ends", v)
                        .isEqualTo(Tck.s(50));
                assertThat(v.drain(k, l3)).as("%s: loosened: 25 − 10", v).isEqualTo(15);
                t.advance(Duration.ofSeconds(50));
                assertThat(v.drain(k, l3)).as("%s: the next window", v).isEqualTo(25);
                // a longer window: the count carries into the 2-minute window holding now
                assertThat(v.drain(
                                k, Limit.fixedWindow(30, Duration.ofMinutes(2)).named("fw")))
                        .as("%s: 30 − 25 in the longer window", v)
                        .isEqualTo(5);
            }
        }
    }

    @Test
    default void aSlidingWindowTightenedOrLoosenedKeepsItsCounts() {
        for (boolean async : new boolean[] {false, true}) {
            ManualTicker t = Tck.ticker();
            String k = Tck.key("change-sw");
            Limit l1 = Limit.slidingWindow(10, Duration.ofSeconds(1)).named("sw");
            Limit l2 = Limit.slidingWindow(4, Duration.ofSeconds(1)).named("sw");
            Limit l3 = Limit.slidingWindow(16, Duration.ofSeconds(1)).named("sw");
            try (RateLimiter rl = newLimiter(t)) {
                View v = new View(rl, async);
                t.advance(Duration.ofMillis(900));
                assertThat(v.drain(k, l1)).as("%s", v).isEqualTo(10);
                assertThat(v.drain(k, l2)).as("%s: tightened", v).isZero();
                assertThat(v.drain(k, l3)).as("%s: loosened: 16 − 10", v).isEqualTo(6);
                // 350 ms later the previous window's 16 weigh 16 × 0.75 = 12; a 2 s window starts from ⌈12⌉
                t.advance(Duration.ofMillis(350));
                assertThat(v.drain(
                                k,
                                Limit.slidingWindow(15, Duration.ofSeconds(2)).named("sw")))
                        .as("%s: the estimate carries into the longer window", v)
                        .isEqualTo(3);
            }
        }
    }

    @Test
    default void aSlidingLogTightenedOrLoosenedKeepsItsEntries() {
        for (boolean async : new boolean[] {false, true}) {
            ManualTicker t = Tck.ticker();
            String k = Tck.key("change-sl");
            Limit l1 = Limit.slidingLog(5, Duration.ofSeconds(10)).named("sl");
            Limit l2 = Limit.slidingLog(3, Duration.ofSeconds(10)).named("sl");
            Limit l3 = Limit.slidingLog(8, Duration.ofSeconds(10)).named("sl");
            try (RateLimiter rl = newLimiter(t)) {
                View v = new View(rl, async);
                assertThat(v.drain(k, l1)).as("%s", v).isEqualTo(5);
                t.advance(Duration.ofSeconds(3));
                Decision denied = v.acquire(k, l2);
                assertThat(denied.allowed()).as("%s: tightened", v).isFalse();
                assertThat(denied.retryAfterNanos())
                        .as("%s: until the entries leave", v)
                        .isEqualTo(Tck.s(7));
                assertThat(v.drain(k, l3)).as("%s: loosened: 8 − 5", v).isEqualTo(3);
                // a longer window keeps the entries longer: at +12 s those of +0 s are still in a 20 s window
                Limit longer = Limit.slidingLog(8, Duration.ofSeconds(20)).named("sl");
                assertThat(v.drain(k, longer)).as("%s", v).isZero();
                t.advance(Duration.ofSeconds(9));
                assertThat(v.drain(k, longer))
                        .as("%s: entries leave one new window after they were logged", v)
                        .isZero();
                t.advance(Duration.ofSeconds(8));
                assertThat(v.drain(k, longer))
                        .as("%s: those of +0 s left at +20 s", v)
                        .isEqualTo(5);
            }
        }
    }

    /** One view of a limiter: its synchronous calls, or its asynchronous ones joined. */
    final class View {
        private final RateLimiter rl;
        private final boolean async;

        View(RateLimiter rl, boolean async) {
            this.rl = rl;
            this.async = async;
        }

        Decision acquire(String key, Limit limit) {
            return async ? rl.tryAcquireAsync(key, limit, 1).join() : rl.tryAcquire(key, limit, 1);
        }

        /** Admissions of cost 1 at this instant until the first denial (at most capacity + 1 calls). */
        int drain(String key, Limit limit) {
            int n = 0;
            while (n <= limit.capacity() && acquire(key, limit).allowed()) {
                n++;
            }
            return n;
        }

        Decision peek(String key, Limit limit) {
            return async ? rl.peekAsync(key, limit, 1).join() : rl.peek(key, limit, 1);
        }

        boolean all(List<Permit> permits) {
            return (async ? rl.tryAcquireAsync(permits).join() : rl.tryAcquire(permits)).allowed();
        }

        Decision reserve(String key, Limit limit, Duration maxWait) {
            return async ? rl.reserveAsync(key, limit, 1, maxWait).join() : rl.reserve(key, limit, 1, maxWait);
        }

        void reset(String key, Limit limit) {
            if (async) {
                rl.resetAsync(key, limit).join();
            } else {
                rl.reset(key, limit);
            }
        }

        @Override
        public String toString() {
            return async ? "async" : "sync";
        }
    }
}
