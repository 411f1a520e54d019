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
import dev.sluice.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pinned sliding window counter scenarios: the weighted previous window and computed retryAfter. */
public interface SlidingWindowTck extends StoreUnderTest {

    @Test
    default void slidingWindowWeighsThePreviousWindowByItsOverlap() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.slidingWindow(10, Duration.ofSeconds(1));
        String k = Tck.key("sw");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 10; i++) {
                assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 9 - i, s(2)));
            }
            // next window opens at 1 s; estimate 10·(1 − e/W) + 1 ≤ 10 first holds at e = 100 ms
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, ms(1100), s(2)));
            t.advanceNanos(ms(1250));
            // estimate 10·0.75 = 7.5: two more fit (8.5, 9.5), the third would make 10.5
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 1, ms(1750)));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 0, ms(1750)));
            // 10·(1 − e/W) + 3 ≤ 10 at e = 300 ms: 50 ms from now
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, ms(50), ms(1750)));
            t.advanceNanos(ms(50) - MICRO);
            assertThat(rl.tryAcquire(k, l).allowed()).isFalse();
            t.advanceNanos(MICRO);
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 0, ms(1700)));
        }
    }

    @Test
    default void slidingWindowForgetsEverythingAfterTwoWindows() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.slidingWindow(4, Duration.ofMillis(100));
        String k = Tck.key("sw-forget");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, l, 4)).isEqualTo(allowed(4, 0, ms(200)));
            t.advanceNanos(ms(100));
            Decision d = rl.tryAcquire(k, l, 4);
            // the previous window still counts in full at e = 0
            assertThat(d).isEqualTo(denied(4, 0, ms(100), ms(100)));
            t.advanceNanos(ms(100));
            assertThat(rl.tryAcquire(k, l, 4)).isEqualTo(allowed(4, 0, ms(200)));
        }
    }
}
