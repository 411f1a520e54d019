package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CoarseTickerTest {

    @Test
    void readingsFollowTheSystemClockAndNeverDecrease() throws InterruptedException {
        Ticker coarse = Ticker.coarse(Duration.ofMillis(1));
        long first = coarse.read();
        assertThat(first)
                .as("starts at the system clock's reading, not at zero")
                .isBetween(
                        Ticker.system().read() - Duration.ofSeconds(1).toNanos(),
                        Ticker.system().read());
        long last = first;
        for (int i = 0; i < 10_000 && last == first; i++) {
            long now = coarse.read();
            assertThat(now).isGreaterThanOrEqualTo(last);
            last = now;
            Thread.sleep(1);
        }
        assertThat(last).as("the daemon thread moves it on").isGreaterThan(first);
        assertThat(last)
                .as("never ahead of the exact clock")
                .isLessThanOrEqualTo(Ticker.system().read());
    }

    @Test
    void aLimiterOnACoarseTickerDecidesByItsReadings() {
        Ticker coarse = Ticker.coarse(Duration.ofSeconds(1));
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().ticker(coarse).build();
        BoundLimit b = limiter.bind("coarse", Limit.tokenBucket(3, Rate.perHour(1)));
        assertThat(b.tryAcquirePermits(3)).isTrue();
        Decision denied = b.tryAcquire();
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.retryAfterNanos())
                .as("an hour, less what the readings moved between the two calls")
                .isBetween(Duration.ofMinutes(59).toNanos(), Duration.ofHours(1).toNanos());
    }

    @Test
    void itsThreadEndsOnceTheTickerIsGone() throws InterruptedException {
        String name = "sluice-coarse-ticker-" + Duration.ofMillis(7);
        Ticker coarse = Ticker.coarse(Duration.ofMillis(7));
        assertThat(updaters(name)).isPositive();
        assertThat(coarse.read()).isPositive();
        coarse = null;
        for (int i = 0; i < 200 && updaters(name) > 0; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(updaters(name)).isZero();
    }

    @Test
    void resolutionsOutsideTenMicrosecondsToOneSecondAreRefused() {
        assertThatThrownBy(() -> Ticker.coarse(Duration.ofNanos(9_999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT0.000009999S is outside");
        assertThatThrownBy(() -> Ticker.coarse(Duration.ofSeconds(2))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Ticker.coarse(null)).isInstanceOf(NullPointerException.class);
    }

    private static long updaters(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(name))
                .count();
    }
}
