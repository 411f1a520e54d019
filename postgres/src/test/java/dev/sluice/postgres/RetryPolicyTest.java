package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The retry policy on its own: which SQLSTATEs, how long the jittered backoffs may be, bad settings. */
class RetryPolicyTest {

    @Test
    void onlySerializationFailuresAndDeadlocksAreRetried() {
        assertThat(RetryPolicy.isRetryable("40001")).isTrue();
        assertThat(RetryPolicy.isRetryable("40P01")).isTrue();
        for (String state : new String[] {"23505", "42P01", "57014", "08006", "40000", null}) {
            assertThat(RetryPolicy.isRetryable(state)).as(state).isFalse();
        }
    }

    @Test
    void backoffIsFullJitterUnderADoublingCap() {
        RetryPolicy p = new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(50), Duration.ofSeconds(2));
        long plenty = Duration.ofSeconds(2).toNanos();
        long[] ceilings = {1, 2, 4, 8, 16, 32, 50, 50, 50};
        for (int attempt = 1; attempt <= ceilings.length; attempt++) {
            long ceiling = Duration.ofMillis(ceilings[attempt - 1]).toNanos();
            long max = 0;
            for (int i = 0; i < 2_000; i++) {
                long b = p.backoffNanos(attempt, plenty);
                assertThat(b).isBetween(0L, ceiling);
                max = Math.max(max, b);
            }
            assertThat(max).as("attempt %d spreads over its range", attempt).isGreaterThan(ceiling / 2);
        }
        assertThat(p.backoffNanos(1_000, plenty))
                .isBetween(0L, Duration.ofMillis(50).toNanos());
        assertThat(new RetryPolicy(Duration.ZERO, Duration.ZERO, Duration.ofSeconds(1)).backoffNanos(1, plenty))
                .isZero();
    }

    @Test
    void backoffEndsBeforeTheBudgetDoes() {
        RetryPolicy p = new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(50), Duration.ofSeconds(2));
        long left = Duration.ofMillis(3).toNanos();
        long max = 0;
        for (int i = 0; i < 2_000; i++) {
            long b = p.backoffNanos(10, left); // a ceiling of 50 ms, 3 ms of the budget left
            assertThat(b).isBetween(0L, left - 1);
            max = Math.max(max, b);
        }
        assertThat(max).as("still jittered over what is left").isGreaterThan(left / 2);
        assertThat(p.backoffNanos(10, 1)).isZero();
    }

    @Test
    void badSettingsNameTheValue() {
        assertThatThrownBy(() -> RetryPolicy.DEFAULT.withBudget(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("budget PT0S");
        assertThatThrownBy(() -> new RetryPolicy(Duration.ofMillis(-1), Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must not be negative");
    }
}
