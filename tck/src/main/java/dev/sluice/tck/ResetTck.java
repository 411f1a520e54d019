package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Reset forgets one (key, limit) and nothing else. */
public interface ResetTck extends StoreUnderTest {

    @Test
    default void resetMakesTheKeyFreshUnderThatLimitOnly() {
        ManualTicker t = Tck.ticker();
        String k = Tck.key("reset");
        Limit[] limits = {
            Limit.tokenBucket(2, Rate.perMinute(1)),
            Limit.gcra(Rate.perMinute(1), 2),
            Limit.fixedWindow(2, Duration.ofMinutes(1)),
            Limit.slidingWindow(2, Duration.ofMinutes(1)),
            Limit.slidingLog(2, Duration.ofMinutes(1))
        };
        Limit other = Limit.tokenBucket(2, Rate.perHour(1));
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, other, 2).allowed()).isTrue();
            for (Limit l : limits) {
                assertThat(rl.tryAcquire(k, l, 2).allowed()).as("%s", l).isTrue();
                assertThat(rl.tryAcquire(k, l).allowed()).as("%s exhausted", l).isFalse();
                rl.reset(k, l);
                assertThat(rl.tryAcquire(k, l, 2).allowed())
                        .as("%s after reset", l)
                        .isTrue();
            }
            assertThat(rl.tryAcquire(k, other).allowed())
                    .as("other limit untouched")
                    .isFalse();
        }
    }

    @Test
    default void resetOfAnUnknownKeyIsHarmless() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(3, Rate.perSecond(1));
        String k = Tck.key("reset-unknown");
        try (RateLimiter rl = newLimiter(t)) {
            rl.reset(k, l);
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(3, 2, Tck.s(1)));
        }
    }
}
