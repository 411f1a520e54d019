package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static dev.sluice.tck.Expect.denied;
import static dev.sluice.tck.Tck.MICRO;
import static dev.sluice.tck.Tck.ms;
import static dev.sluice.tck.Tck.s;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Pinned fixed window scenarios: epoch-aligned windows, exact counts. */
public interface FixedWindowTck extends StoreUnderTest {

    @Test
    default void fixedWindowCountsWithinAnEpochAlignedWindow() {
        ManualTicker t = Tck.ticker();
        t.advanceNanos(ms(500));
        Limit l = Limit.fixedWindow(5, Duration.ofSeconds(1));
        String k = Tck.key("fw");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 5; i++) {
                assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(5, 4 - i, ms(500)));
            }
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(5, 0, ms(500), ms(500)));
            t.advanceNanos(ms(500) - MICRO);
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(5, 0, MICRO, MICRO));
            t.advanceNanos(MICRO);
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(5, 4, s(1)));
        }
    }

    @Test
    default void fixedWindowCostsAddUpAndDeniedCostsNothing() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.fixedWindow(10, Duration.ofMinutes(1));
        String k = Tck.key("fw-cost");
        try (RateLimiter rl = newLimiter(t)) {
            t.advanceNanos(s(15));
            assertThat(rl.tryAcquire(k, l, 4)).isEqualTo(allowed(10, 6, s(45)));
            assertThat(rl.tryAcquire(k, l, 4)).isEqualTo(allowed(10, 2, s(45)));
            assertThat(rl.tryAcquire(k, l, 3)).isEqualTo(denied(10, 2, s(45), s(45)));
            assertThat(rl.tryAcquire(k, l, 2)).isEqualTo(allowed(10, 0, s(45)));
        }
    }

    @Test
    default void fixedWindowAllowsTwiceTheLimitAcrossABoundary() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.fixedWindow(3, Duration.ofSeconds(10));
        String k = Tck.key("fw-boundary");
        try (RateLimiter rl = newLimiter(t)) {
            t.advanceNanos(s(10) - MICRO);
            assertThat(rl.tryAcquire(k, l, 3)).isEqualTo(allowed(3, 0, MICRO));
            t.advanceNanos(MICRO);
            assertThat(rl.tryAcquire(k, l, 3)).isEqualTo(allowed(3, 0, s(10)));
        }
    }
}
