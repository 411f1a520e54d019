package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.Settlement;
import dev.sluice.StoreException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The in-memory store's table of pending reservations is bounded: expired records are dropped, and when it is full of
 * unexpired ones a further reservation takes nothing and fails OVERLOADED, saying what to do.
 */
class ReservationsTest {
    private static final long T0 = 1_767_225_600L * 1_000_000_000L;
    private final Limit limit = Limit.tokenBucket(1_000, Rate.perHour(1));

    @Test
    void aFullTableRefusesAReservationTakingNothingUntilOneExpiresOrIsSettled() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        try (InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxReservations(3).build()) {
            rl.tryAcquireEstimate("k", limit, 1, "a", Duration.ofSeconds(10));
            rl.tryAcquireEstimate("k", limit, 1, "b", Duration.ofSeconds(20));
            rl.tryAcquireEstimate("other", limit, 1, "c", Duration.ofSeconds(20));
            assertThat(rl.pendingReservations()).isEqualTo(3);
            assertThatThrownBy(() -> rl.tryAcquireEstimate("k", limit, 5, "d", Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(
                            StoreException.class,
                            e -> assertThat(e.degradation()).isEqualTo(Degradation.OVERLOADED))
                    .hasMessageContaining("holds 3 pending reservations")
                    .hasMessageContaining("maxReservations");
            assertThat(rl.peek("k", limit, 1).remaining()).as("nothing taken").isEqualTo(998);
            assertThat(rl.pendingReservations()).isEqualTo(3);

            t.advanceNanos(Duration.ofSeconds(10).toNanos()); // "a" expires: its place is free
            assertThat(rl.tryAcquireEstimate("k", limit, 5, "d", Duration.ofSeconds(10))
                            .allowed())
                    .isTrue();
            assertThat(rl.pendingReservations()).isEqualTo(3);
            assertThat(rl.settle("k", limit, "a", 0)).isEqualTo(Settlement.NOT_PENDING);

            assertThatThrownBy(() -> rl.tryAcquireEstimate("k", limit, 1, "e", Duration.ofSeconds(10)))
                    .isInstanceOf(StoreException.class);
            assertThat(rl.settle("k", limit, "d", 1).settled()).isTrue();
            assertThat(rl.tryAcquireEstimate("k", limit, 1, "e", Duration.ofSeconds(10))
                            .allowed())
                    .isTrue();
        }
    }

    @Test
    void expiredRecordsAreDroppedAsTheStoreIsUsed() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.builder().ticker(t).build()) {
            for (int i = 0; i < 100; i++) {
                rl.tryAcquireEstimate("k", limit, 1, "r" + i, Duration.ofSeconds(1));
            }
            assertThat(rl.pendingReservations()).isEqualTo(100);
            t.advanceNanos(Duration.ofSeconds(1).toNanos());
            assertThat(rl.settle("k", limit, "r0", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.pendingReservations())
                    .as("the key's stripe was swept")
                    .isZero();
            assertThat(rl.peek("k", limit, 1).remaining())
                    .as("the estimates stand")
                    .isEqualTo(900);
        }
    }

    @Test
    void aDeniedOrRefusedReservationKeepsNoPlace() {
        Limit two = Limit.tokenBucket(2, Rate.perHour(1));
        try (InMemoryRateLimiter rl = InMemoryRateLimiter.builder()
                .ticker(ManualTicker.atEpochNanos(T0))
                .maxReservations(1)
                .build()) {
            rl.tryAcquire("k", two, 2);
            assertThat(rl.tryAcquireEstimate("k", two, 1, "x", Duration.ofSeconds(1))
                            .allowed())
                    .isFalse();
            assertThat(rl.pendingReservations()).isZero();
            assertThat(rl.tryAcquireEstimate("j", two, 1, "x", Duration.ofSeconds(1))
                            .allowed())
                    .isTrue();
            assertThatThrownBy(() -> rl.tryAcquireEstimate("j", two, 1, "x", Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(rl.pendingReservations()).isEqualTo(1);
        }
    }

    @Test
    void theBoundMustBePositive() {
        assertThatThrownBy(() -> InMemoryRateLimiter.builder().maxReservations(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxReservations 0");
    }
}
