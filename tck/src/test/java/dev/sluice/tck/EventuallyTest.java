package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EventuallyTest {

    @Test
    void returnsOnceTheConditionHoldsAskingAgainMeanwhile() {
        AtomicInteger asks = new AtomicInteger();
        Eventually.await(Duration.ofSeconds(10), "the third ask", () -> asks.incrementAndGet() == 3);
        assertThat(asks.get()).isEqualTo(3);
    }

    @Test
    void failsNamingWhatWasAwaitedOnceTheHangGuardHasPassed() {
        AtomicInteger asks = new AtomicInteger();
        assertThatThrownBy(() -> Eventually.await(Duration.ofSeconds(1), "redis answering PING", () -> {
                    asks.incrementAndGet();
                    return false;
                }))
                .isInstanceOf(AssertionError.class)
                .hasMessage("not seen within the hang guard of PT1S: redis answering PING");
        assertThat(asks.get())
                .as("asked more than once, with a park in between")
                .isGreaterThan(1);
    }

    @Test
    void aConditionThatCannotBeAskedFailsTheWaitAtOnce() {
        IOException refused = new IOException("connection refused");
        assertThatThrownBy(() -> Eventually.await(Duration.ofSeconds(10), "the banner", () -> {
                    throw refused;
                }))
                .isInstanceOf(AssertionError.class)
                .hasMessage("asking whether the banner failed")
                .hasCause(refused);
    }

    @Test
    void aHangGuardUnderOneSecondIsRefused() {
        assertThatThrownBy(() -> Eventually.await(Duration.ofMillis(999), "x", () -> true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT0.999S is under 1 s");
    }
}
