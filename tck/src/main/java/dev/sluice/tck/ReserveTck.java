package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static dev.sluice.tck.Expect.allowedAfterWait;
import static dev.sluice.tck.Expect.denied;
import static dev.sluice.tck.Tck.ms;
import static dev.sluice.tck.Tck.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Reserve: take future permits within a maximum wait ("leaky bucket as a queue"). */
public interface ReserveTck extends StoreUnderTest {

    @Test
    default void reserveTakesFuturePermitsAndSaysHowLongToWait() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(1, Rate.perSecond(1));
        String k = Tck.key("reserve");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.reserve(k, l, 1, Duration.ZERO)).isEqualTo(allowed(1, 0, s(1)));
            assertThat(rl.reserve(k, l, 1, Duration.ofSeconds(2))).isEqualTo(allowedAfterWait(1, 0, s(1), s(2)));
            // needs 2 s, may wait 1.5 s: denied, nothing taken, retry in 0.5 s
            assertThat(rl.reserve(k, l, 1, Duration.ofMillis(1500))).isEqualTo(denied(1, 0, ms(500), s(2)));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(1, 0, s(2), s(2)));
            t.advanceNanos(ms(500));
            assertThat(rl.reserve(k, l, 1, Duration.ofMillis(1500)))
                    .isEqualTo(allowedAfterWait(1, 0, ms(1500), ms(2500)));
        }
    }

    @Test
    default void reserveOnGcraQueuesAtTheEmissionInterval() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.gcra(Rate.perSecond(10), 2);
        String k = Tck.key("reserve-gcra");
        try (RateLimiter rl = newLimiter(t)) {
            for (int i = 0; i < 2; i++) {
                assertThat(rl.reserve(k, l, 1, Duration.ofSeconds(1)).retryAfterNanos())
                        .isZero();
            }
            for (int i = 1; i <= 5; i++) {
                assertThat(rl.reserve(k, l, 1, Duration.ofSeconds(1)).retryAfterNanos())
                        .isEqualTo(ms(100) * i);
            }
        }
    }

    @Test
    default void reserveIsRejectedForWindowAlgorithms() {
        String k = Tck.key("reserve-window");
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            for (Limit l : new Limit[] {
                Limit.fixedWindow(5, Duration.ofSeconds(1)),
                Limit.slidingWindow(5, Duration.ofSeconds(1)),
                Limit.slidingLog(5, Duration.ofSeconds(1))
            }) {
                assertThatThrownBy(() -> rl.reserve(k, l, 1, Duration.ofSeconds(1)))
                        .isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining(l.algorithm().configName());
            }
        }
    }

    /** A negative or missing maxWait is the caller's mistake on every store, refused before anything is taken. */
    @SuppressWarnings("NullAway") // passes null on purpose, to see it refused
    @Test
    default void aNegativeOrMissingMaxWaitIsRefusedWithTheFix() {
        String k = Tck.key("reserve-bad-wait");
        Limit l = Limit.tokenBucket(2, Rate.perSecond(1));
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            assertThatThrownBy(() -> rl.reserve(k, l, 1, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("PT-0.001S")
                    .hasMessageContaining("Duration.ZERO");
            assertThatThrownBy(() -> rl.reserve(k, l, 1, null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("maxWait");
            assertThat(rl.tryAcquire(k, l, 2).allowed()).as("nothing was taken").isTrue();
        }
    }

    /** A maxWait longer than a long counts in nanoseconds (292 years) is "as long as it takes" on every store. */
    @Test
    default void aMaxWaitTooLongForNanosecondsWaitsAsLongAsItTakes() {
        Limit l = Limit.tokenBucket(1, Rate.perSecond(1));
        String k = Tck.key("reserve-forever");
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            Duration forever = Duration.ofDays(365L * 1000);
            assertThat(rl.reserve(k, l, 1, forever)).isEqualTo(allowed(1, 0, s(1)));
            assertThat(rl.reserve(k, l, 1, forever)).isEqualTo(allowedAfterWait(1, 0, s(1), s(2)));
        }
    }
}
