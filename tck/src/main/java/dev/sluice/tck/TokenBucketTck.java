package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static dev.sluice.tck.Expect.denied;
import static dev.sluice.tck.Tck.MICRO;
import static dev.sluice.tck.Tck.ms;
import static dev.sluice.tck.Tck.s;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pinned token bucket scenarios with exact expected decisions. */
public interface TokenBucketTck extends StoreUnderTest {

    @Test
    default void tokenBucketStartsFullThenDeniesTheEleventhForExactlyOneSecond() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        String k = Tck.key("tb");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 10; i++) {
                assertThat(rl.tryAcquire(k, l)).as("call %d", i + 1).isEqualTo(allowed(10, 9 - i, s(i + 1)));
            }
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, s(1), s(10)));
            t.advance(Duration.ofSeconds(1));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 0, s(10)));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, s(1), s(10)));
        }
    }

    @Test
    default void tokenBucketPartialRefillIsCountedExactly() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        String k = Tck.key("tb-partial");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 10; i++) {
                rl.tryAcquire(k, l);
            }
            t.advanceNanos(ms(2500));
            // 2.5 tokens back: two whole ones, half of the third
            assertThat(rl.tryAcquire(k, l, 2)).isEqualTo(allowed(10, 0, ms(9500)));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, ms(500), ms(9500)));
            t.advanceNanos(ms(500));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 0, s(10)));
        }
    }

    @Test
    default void tokenBucketDeniedCallConsumesNothing() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(4, Rate.perSecond(2));
        String k = Tck.key("tb-denied");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, l, 4).allowed()).isTrue();
            for (int i = 0; i < 50; i++) {
                assertThat(rl.tryAcquire(k, l, 3)).isEqualTo(denied(4, 0, ms(1500), s(2)));
            }
            t.advanceNanos(ms(1500));
            assertThat(rl.tryAcquire(k, l, 3)).isEqualTo(allowed(4, 0, s(2)));
        }
    }

    @Test
    default void tokenBucketRetryAfterIsNeverEarly() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(5, Rate.of(2, Duration.ofMillis(3)));
        String k = Tck.key("tb-retry");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, l, 5).allowed()).isTrue();
            Decision d = rl.tryAcquire(k, l, 3);
            assertThat(d.allowed()).isFalse();
            assertThat(d.retryAfterNanos()).isEqualTo(ms(3) * 3 / 2);
            t.advanceNanos(d.retryAfterNanos() - MICRO);
            assertThat(rl.tryAcquire(k, l, 3).allowed())
                    .as("one microsecond early")
                    .isFalse();
            t.advanceNanos(MICRO);
            assertThat(rl.tryAcquire(k, l, 3).allowed())
                    .as("exactly at retryAfter")
                    .isTrue();
        }
    }

    @Test
    default void tokenBucketFractionalRefillCarriesOver() {
        ManualTicker t = Tck.ticker();
        // 3 per second: one token every 333,333,333⅓ ns
        Limit l = Limit.tokenBucket(10, Rate.perSecond(3));
        String k = Tck.key("tb-fraction");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 10; i++) {
                rl.tryAcquire(k, l);
            }
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, 333_333_334, 3_333_333_334L));
            t.advanceNanos(333_333 * MICRO);
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, 334, 3_000_000_334L));
            t.advanceNanos(MICRO);
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 0, 3_333_332_667L));
        }
    }

    @Test
    default void tokenBucketLosesNoRefillToRounding() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perSecond(3));
        String k = Tck.key("tb-noloss");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 10; i++) {
                rl.tryAcquire(k, l);
            }
            int admitted = 0;
            for (int step = 0; step < 3000; step++) {
                t.advanceNanos(ms(1));
                if (rl.tryAcquire(k, l).allowed()) {
                    admitted++;
                }
            }
            assertThat(admitted).as("3 seconds at 3/s, polled every ms").isEqualTo(9);
        }
    }

    @Test
    default void tokenBucketNeverHoldsMoreThanCapacity() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(3, Rate.perSecond(100));
        String k = Tck.key("tb-cap");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(3, 2, ms(10)));
            t.advance(Duration.ofHours(5));
            for (int i = 0; i < 3; i++) {
                assertThat(rl.tryAcquire(k, l).allowed()).isTrue();
            }
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(3, 0, ms(10), ms(30)));
        }
    }

    @Test
    default void tokenBucketResetAfterIsWhenTheBucketIsFullAgain() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perSecond(2));
        String k = Tck.key("tb-reset-after");
        try (RateLimiter rl = newLimiter(t)) {
            Decision d = rl.tryAcquire(k, l, 7);
            assertThat(d).isEqualTo(allowed(10, 3, ms(3500)));
            t.advanceNanos(d.resetAfterNanos());
            assertThat(rl.tryAcquire(k, l, 10)).isEqualTo(allowed(10, 0, s(5)));
        }
    }

    @Test
    default void sameKeyUnderTwoLimitsIsTwoBuckets() {
        ManualTicker t = Tck.ticker();
        Limit a = Limit.tokenBucket(2, Rate.perSecond(1));
        Limit b = Limit.tokenBucket(3, Rate.perSecond(1));
        String k = Tck.key("tb-two-limits");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, a, 2).allowed()).isTrue();
            assertThat(rl.tryAcquire(k, a).allowed()).isFalse();
            assertThat(rl.tryAcquire(k, b, 3)).isEqualTo(allowed(3, 0, s(3)));
        }
    }
}
