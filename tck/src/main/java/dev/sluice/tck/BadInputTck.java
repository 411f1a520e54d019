package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Bad input is an IllegalArgumentException naming the value, thrown before any state changes. */
public interface BadInputTck extends StoreUnderTest {

    @Test
    default void badCostsAreRejectedAndChangeNothing() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1)).named("api-default");
        String k = Tck.key("bad-cost");
        try (RateLimiter rl = newLimiter(t)) {
            assertThatThrownBy(() -> rl.tryAcquire(k, l, 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 0");
            assertThatThrownBy(() -> rl.tryAcquire(k, l, -5)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost -5");
            assertThatThrownBy(() -> rl.tryAcquire(k, l, 11)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 11 exceeds capacity 10 of limit 'api-default'")
                    .hasMessageContaining("can never be granted");
            assertThatThrownBy(() -> rl.reserve(k, l, 11, Duration.ofHours(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost 11");
            // async: thrown at the call or carried by the future, either way an IllegalArgumentException
            Throwable async = org.assertj.core.api.Assertions.catchThrowable(
                    () -> rl.tryAcquireAsync(k, l, Long.MAX_VALUE).join());
            Throwable cause = async instanceof java.util.concurrent.CompletionException ? async.getCause() : async;
            assertThat(cause).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exceeds capacity");
            assertThat(rl.tryAcquire(k, l)).as("state untouched").isEqualTo(allowed(10, 9, Tck.s(1)));
        }
    }

    @Test
    default void badKeysAreRejected() {
        Limit l = Limit.fixedWindow(5, Duration.ofSeconds(1));
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            assertThatThrownBy(() -> rl.tryAcquire("", l)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            String huge = "k".repeat(4097);
            assertThatThrownBy(() -> rl.tryAcquire(huge, l)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("4097");
            assertThatThrownBy(() -> rl.tryAcquire(null, l)).isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("key");
            assertThatThrownBy(() -> rl.tryAcquire("k", null)).isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("limit");
        }
    }

    @Test
    default void awkwardKeysAreDistinctAndLimitedCorrectly() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(2, Rate.perMinute(1));
        String base = Tck.key("awkward");
        String[] keys = {base + " with spaces", base + "{braces}", base + "'quote\"", base + "émoji 🚦",
                base + "\\back\\slash", base + ":" + "x".repeat(4096 - base.length() - 1), base + "%_*?[]"};
        try (RateLimiter rl = newLimiter(t)) {
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, l, 2).allowed()).as("first use of %s", k).isTrue();
            }
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, l).allowed()).as("second use of %s", k).isFalse();
            }
        }
    }
}
