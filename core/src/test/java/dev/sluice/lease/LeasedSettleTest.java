package dev.sluice.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.Settlement;
import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A cost known afterwards goes through the leases to the store unchanged: reserved and settled there, counted. */
class LeasedSettleTest {
    private static final long START = 1_700_000_000_000_000_000L;

    @Test
    void estimatesAndSettlesAreTheStoresOwnCalls() {
        ManualTicker clock = ManualTicker.atEpochNanos(START);
        Limit limit = Limit.tokenBucket(10, Rate.perHour(10));
        InMemoryRateLimiter store = InMemoryRateLimiter.builder().ticker(clock).build();
        try (LeasedRateLimiter node =
                LeasedRateLimiter.builder(store).ticker(clock).build()) {
            Duration within = Duration.ofMinutes(1);
            assertThat(node.tryAcquireEstimate("k", limit, 4, "a", within).remaining())
                    .isEqualTo(6);
            assertThat(node.tryAcquireEstimateAsync("k", limit, 2, "b", within)
                            .join()
                            .remaining())
                    .isEqualTo(4);
            assertThat(store.pendingReservations()).isEqualTo(2);
            assertThat(node.settle("k", limit, "a", 1)).isEqualTo(new Settlement(true, 4, -3, 7));
            assertThat(node.settleAsync("k", limit, "b", 5).join()).isEqualTo(new Settlement(true, 2, 3, 4));
            assertThat(store.peek("k", limit, 1).remaining()).isEqualTo(4);
            assertThatThrownBy(() -> node.settle("k", limit, "b", 11))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("actual cost 11");
            assertThat(node.storeCalls()).isEqualTo(4);
            assertThat(node.localDecisions()).isZero();
        }
    }
}
