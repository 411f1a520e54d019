package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static dev.sluice.tck.Expect.denied;
import static dev.sluice.tck.Tck.ms;
import static dev.sluice.tck.Tck.s;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pinned sliding log scenarios: an exact trailing window. */
public interface SlidingLogTck extends StoreUnderTest {

    @Test
    default void slidingLogIsExactOverTheTrailingWindow() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.slidingLog(3, Duration.ofSeconds(1));
        String k = Tck.key("sl");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(3, 2, s(1)));
            t.advanceNanos(ms(100));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(3, 1, s(1)));
            t.advanceNanos(ms(100));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(3, 0, s(1)));
            t.advanceNanos(ms(100));
            // the entry at 0 leaves the window (t − W, t] at 1 s
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(3, 0, ms(700), ms(900)));
            t.advanceNanos(ms(700));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(3, 0, s(1)));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(3, 0, ms(100), s(1)));
        }
    }

    @Test
    default void slidingLogWaitsForEnoughCostToLeave() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.slidingLog(10, Duration.ofSeconds(10));
        String k = Tck.key("sl-cost");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, l, 2)).isEqualTo(allowed(10, 8, s(10)));
            t.advanceNanos(s(1));
            assertThat(rl.tryAcquire(k, l, 3)).isEqualTo(allowed(10, 5, s(10)));
            t.advanceNanos(s(1));
            assertThat(rl.tryAcquire(k, l, 5)).isEqualTo(allowed(10, 0, s(10)));
            // needs 4: the 2 at 0 s are not enough, the 3 at 1 s complete it -> at 11 s
            assertThat(rl.tryAcquire(k, l, 4)).isEqualTo(denied(10, 0, s(9), s(10)));
            t.advanceNanos(s(8));
            assertThat(rl.tryAcquire(k, l, 2)).isEqualTo(allowed(10, 0, s(10)));
        }
    }
}
