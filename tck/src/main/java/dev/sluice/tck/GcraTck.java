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
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Pinned GCRA scenarios, and the equivalence with the token bucket. */
public interface GcraTck extends StoreUnderTest {

    @Test
    default void gcraLetsBurstPassAtOnceThenSpacesByTheEmissionInterval() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.gcra(Rate.perSecond(4), 5);
        String k = Tck.key("gcra");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 5; i++) {
                assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(5, 4 - i, ms(250) * (i + 1)));
            }
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(5, 0, ms(250), ms(1250)));
            t.advanceNanos(ms(250) - MICRO);
            assertThat(rl.tryAcquire(k, l).allowed()).isFalse();
            t.advanceNanos(MICRO);
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(5, 0, ms(1250)));
        }
    }

    @Test
    default void gcraWithCostSpendsCostEmissionIntervals() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.gcra(Rate.perMinute(60), 10);
        String k = Tck.key("gcra-cost");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(k, l, 6)).isEqualTo(allowed(10, 4, s(6)));
            assertThat(rl.tryAcquire(k, l, 5)).isEqualTo(denied(10, 4, s(1), s(6)));
            assertThat(rl.tryAcquire(k, l, 4)).isEqualTo(allowed(10, 0, s(10)));
        }
    }

    @Test
    default void gcraDecidesExactlyLikeTheTokenBucketWithBurstEqualToCapacity() {
        ManualTicker t = Tck.ticker();
        Rate rate = Rate.of(7, Duration.ofMillis(1300));
        Limit gcra = Limit.gcra(rate, 6);
        Limit bucket = Limit.tokenBucket(6, rate);
        String base = Tck.key("equiv");
        SplittableRandom random = new SplittableRandom(20261121);
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < differentialSteps(); i++) {
                t.advanceNanos(random.nextLong(0, 400_000) * MICRO);
                long cost = random.nextLong(1, 7);
                Decision g = rl.tryAcquire(base + ":g", gcra, cost);
                Decision b = rl.tryAcquire(base + ":b", bucket, cost);
                assertThat(g).as("step %d cost %d", i, cost).isEqualTo(b);
            }
        }
    }
}
