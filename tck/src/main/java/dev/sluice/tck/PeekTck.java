package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
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
import java.util.List;
import org.junit.jupiter.api.Test;

/** Check only: peek answers what tryAcquire would, and takes nothing. */
public interface PeekTck extends StoreUnderTest {

    @Test
    default void peekTakesNothingAndReportsTheStateAsItIs() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(5, Rate.perSecond(1));
        String k = Tck.key("peek");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.peek(k, l)).as("an unknown key is full").isEqualTo(allowed(5, 5, 0));
            assertThat(rl.tryAcquire(k, l, 3)).isEqualTo(allowed(5, 2, s(3)));
            for (int i = 0; i < 20; i++) {
                assertThat(rl.peek(k, l, 2)).isEqualTo(allowed(5, 2, s(3)));
            }
            assertThat(rl.peek(k, l, 4)).as("would be denied").isEqualTo(denied(5, 2, s(2), s(3)));
            assertThat(rl.tryAcquire(k, l, 2))
                    .as("nothing was taken by peeking")
                    .isEqualTo(allowed(5, 0, s(5)));
            t.advanceNanos(ms(500));
            assertThat(rl.peek(k, l)).isEqualTo(denied(5, 0, ms(500), ms(4500)));
        }
    }

    @Test
    default void peekWorksForEveryAlgorithm() {
        ManualTicker t = Tck.ticker();
        String k = Tck.key("peek-all");
        List<Limit> limits = List.of(
                Limit.gcra(Rate.perSecond(2), 4),
                Limit.fixedWindow(4, Duration.ofSeconds(2)),
                Limit.slidingWindow(4, Duration.ofSeconds(2)),
                Limit.slidingLog(4, Duration.ofSeconds(2)));
        try (RateLimiter rl = newLimiter(t)) {
            for (Limit l : limits) {
                assertThat(rl.tryAcquire(k, l, 3).allowed()).isTrue();
                assertThat(rl.peek(k, l).allowed()).as("%s", l).isTrue();
                assertThat(rl.peek(k, l).remaining()).as("%s", l).isEqualTo(1);
                assertThat(rl.peek(k, l, 2).allowed()).as("%s", l).isFalse();
                assertThat(rl.tryAcquire(k, l).remaining())
                        .as("%s after peeks", l)
                        .isZero();
            }
        }
    }

    @Test
    default void peekRejectsBadInputLikeTryAcquire() {
        Limit l = Limit.fixedWindow(3, Duration.ofSeconds(1));
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            assertThatThrownBy(() -> rl.peek(Tck.key("p"), l, 4))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 4 exceeds capacity 3");
            assertThatThrownBy(() -> rl.peek("", l)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
