package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.ManualTicker;
import dev.sluice.StoreException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The in-memory slots' bound (the TCK's InFlightTck checks their semantics). */
class InMemoryInFlightTest {
    private static final Duration LEASE = Duration.ofSeconds(10);

    @Test
    void aFullStoreSweepsEndedLeasesThenFailsOverloadedNamingItsBound() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(3).build();
        InFlightLimiter s = rl.inFlight();
        assertThat(s.tryAcquire("a", 5, "h1", Duration.ofSeconds(1)).allowed()).isTrue();
        assertThat(s.tryAcquire("b", 5, "h1", LEASE).allowed()).isTrue();
        assertThat(s.tryAcquire("c", 5, "h1", LEASE).allowed()).isTrue();
        assertThat(s.tryAcquire("c", 5, "h1", LEASE).allowed())
                .as("a holder's renewal takes no new slot")
                .isTrue();
        assertThatThrownBy(() -> s.tryAcquire("d", 5, "h1", LEASE))
                .isInstanceOf(StoreException.class)
                .hasMessageContaining("holds 3 slots in flight")
                .hasMessageContaining("maxKeys")
                .satisfies(e -> assertThat(((StoreException) e).degradation()).isEqualTo(Degradation.OVERLOADED));
        assertThat(s.tryAcquire("b", 1, "h2", LEASE).allowed())
                .as("a full key is denied, not failed")
                .isFalse();
        t.advance(Duration.ofSeconds(1)); // a's lease ended: the sweep finds it although nobody touches "a"
        assertThat(s.tryAcquire("d", 5, "h1", LEASE).allowed()).isTrue();
        assertThat(((InMemoryInFlight) s).slots()).isEqualTo(3);
        assertThat(s.release("d", "h1")).isTrue();
        assertThat(((InMemoryInFlight) s).slots()).isEqualTo(2);
    }

    @Test
    void keysLeftWithoutSlotsAreDropped() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(2).build();
        InFlightLimiter s = rl.inFlight();
        for (int i = 0; i < 100; i++) {
            assertThat(s.tryAcquire("k" + i, 1, "h", LEASE).allowed()).isTrue();
            assertThat(s.tryAcquire("k" + i, 1, "other", LEASE).allowed()).isFalse();
            assertThat(s.release("k" + i, "h")).isTrue();
        }
        assertThat(((InMemoryInFlight) s).slots()).isZero();
    }
}
