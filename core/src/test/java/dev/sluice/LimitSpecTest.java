package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The one configuration vocabulary: envoy's units and a spec that builds the core limit. */
class LimitSpecTest {

    @Test
    void unitsAreEnvoysWithAMonthOf30DaysAndAYearOf365() {
        assertThat(RateUnit.names()).isEqualTo("second, minute, hour, day, week, month, year");
        assertThat(RateUnit.fromConfigName(" Minute ").length()).isEqualTo(Duration.ofMinutes(1));
        assertThat(RateUnit.MONTH.length()).isEqualTo(Duration.ofDays(30));
        assertThat(RateUnit.YEAR.length()).isEqualTo(Duration.ofDays(365));
        assertThat(RateUnit.ofLength(Duration.ofDays(7))).isEqualTo(RateUnit.WEEK);
        assertThat(RateUnit.ofLength(Duration.ofSeconds(90)))
                .as("a window that is no unit")
                .isNull();
        assertThatThrownBy(() -> RateUnit.fromConfigName("fortnight"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unknown unit 'fortnight': use one of second, minute, hour, day, week, month, year,"
                        + " or a window (e.g. 90s) for any other length");
    }

    @Test
    void everyAlgorithmBuildsTheLimitItsFactoryWould() {
        Duration minute = Duration.ofMinutes(1);
        assertThat(LimitSpec.of(Algorithm.FIXED_WINDOW, 10, RateUnit.MINUTE).toLimit())
                .isEqualTo(Limit.fixedWindow(10, minute));
        assertThat(LimitSpec.of(Algorithm.SLIDING_WINDOW, 10, RateUnit.MINUTE).toLimit())
                .isEqualTo(Limit.slidingWindow(10, minute));
        assertThat(LimitSpec.of(Algorithm.SLIDING_LOG, 10, RateUnit.MINUTE).toLimit())
                .isEqualTo(Limit.slidingLog(10, minute));
        assertThat(new LimitSpec(Algorithm.TOKEN_BUCKET, 10, minute, 25L).toLimit())
                .isEqualTo(Limit.tokenBucket(25, Rate.of(10, minute)));
        assertThat(LimitSpec.of(Algorithm.GCRA, 10, RateUnit.MINUTE).toLimit())
                .as("the burst defaults to requests per unit")
                .isEqualTo(Limit.gcra(Rate.of(10, minute), 10));
    }

    @Test
    void aBurstOnAnAlgorithmWithoutOneIsRefusedWithTheFix() {
        assertThatThrownBy(() -> new LimitSpec(Algorithm.SLIDING_WINDOW, 10, Duration.ofMinutes(1), 20L))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'burst' applies to token_bucket and gcra, not sliding_window: remove it or use algorithm"
                        + " token_bucket");
    }
}
