package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class LimitTest {

    @Test
    void ratesAndWindowsOutsideTheirRangeAreRejectedWithTheValueAndTheFix() {
        assertThatThrownBy(() -> Rate.perSecond(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits 0 must be at least 1");
        assertThatThrownBy(() -> Rate.of(-3, Duration.ofSeconds(1))).hasMessageContaining("permits -3");
        assertThatThrownBy(() -> Rate.of(1, Duration.ofNanos(999_999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shorter than 1 ms")
                .hasMessageContaining("Duration.ofMillis(1)");
        assertThatThrownBy(() -> Rate.of(1, Duration.ofDays(40_000))).hasMessageContaining("longer than");
        assertThatThrownBy(() -> Rate.of(1, null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Limit.fixedWindow(10, Duration.ZERO)).hasMessageContaining("window PT0S");
        assertThatThrownBy(() -> Limit.slidingWindow(10, Duration.ofMillis(-5)))
                .hasMessageContaining("shorter than 1 ms");
    }

    @Test
    void capacitiesOutsideTheirRangeAreRejected() {
        assertThatThrownBy(() -> Limit.tokenBucket(0, Rate.perSecond(1)))
                .hasMessageContaining("capacity 0 must be at least 1");
        assertThatThrownBy(() -> Limit.gcra(Rate.perSecond(1), -1)).hasMessageContaining("burst -1");
        assertThatThrownBy(() -> Limit.fixedWindow(Limit.MAX_WINDOW_PERMITS + 1, Duration.ofSeconds(1)))
                .hasMessageContaining("permits 2147483648 exceeds the maximum 2147483647");
        assertThatThrownBy(() -> Limit.slidingLog(10_001, Duration.ofSeconds(1)))
                .hasMessageContaining("10001")
                .hasMessageContaining("slidingWindow");
        assertThatThrownBy(() -> Limit.tokenBucket(Long.MAX_VALUE / 2, Rate.of(999_983, Duration.ofSeconds(1))))
                .hasMessageContaining("too large to compute exactly");
    }

    @Test
    void costsAreCheckedAgainstTheLimit() {
        Limit l = Limit.tokenBucket(100, Rate.perSecond(1)).named("api-default");
        assertThatThrownBy(() -> l.checkCost(150))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cost 150 exceeds capacity 100 of limit 'api-default': it can never be granted; "
                        + "raise the capacity or lower the cost");
        assertThatThrownBy(() -> l.checkCost(0)).hasMessageContaining("cost 0 must be at least 1");
        l.checkCost(100);
    }

    @Test
    void keysAreOneTo4096Characters() {
        assertThatThrownBy(() -> Permit.checkKey("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> Permit.checkKey("x".repeat(4097)))
                .hasMessageContaining("4097 characters")
                .hasMessageContaining("hash it");
        assertThatThrownBy(() -> Permit.checkKey(null)).isInstanceOf(NullPointerException.class);
        Permit.checkKey("x".repeat(4096));
        assertThatThrownBy(() -> Permit.of("k", Limit.fixedWindow(2, Duration.ofSeconds(1)), 3))
                .hasMessageContaining("cost 3 exceeds capacity 2");
    }

    @Test
    void limitsAreEqualByNameAlgorithmCapacityAndReducedRate() {
        Limit a = Limit.tokenBucket(10, Rate.of(2, Duration.ofSeconds(2)));
        Limit b = Limit.tokenBucket(10, Rate.perSecond(1)).named("x");
        assertThat(a).isEqualTo(Limit.tokenBucket(10, Rate.perSecond(1))).hasSameHashCodeAs(b.named(null));
        assertThat(a).as("a name is identity").isNotEqualTo(b);
        assertThat(b).isEqualTo(a.named("x")).hasSameHashCodeAs(a.named("x"));
        assertThat(a.id()).isEqualTo("tb:10:1:1000000000");
        assertThat(b.id()).as("the numbers").isEqualTo(a.id());
        assertThat(Limit.gcra(Rate.perSecond(1), 10)).isNotEqualTo(a);
        assertThat(Limit.fixedWindow(5, Duration.ofMinutes(1)).id()).isEqualTo("fw:5:60000000000");
        assertThat(Limit.tokenBucket(10, Rate.perSecond(3)).timeScale()).isEqualTo(3);
        assertThat(Limit.tokenBucket(10, Rate.perSecond(3)).intervalScaled()).isEqualTo(1_000_000_000L);
        assertThat(b.toString()).isEqualTo("x=tokenBucket(10, 1/1s)");
    }

    @Test
    void aNamedLimitIsIdentifiedByItsNameAndAlgorithmAnUnnamedOneByItsNumbers() {
        Limit a = Limit.tokenBucket(10, Rate.perSecond(1)).named("api");
        Limit tighter = Limit.tokenBucket(5, Rate.perMinute(1)).named("api");
        assertThat(a.identity()).isEqualTo("tb@api");
        assertThat(a.sameIdentity(tighter)).isTrue();
        assertThat(a).isNotEqualTo(tighter);
        assertThat(a.sameIdentity(Limit.gcra(Rate.perSecond(1), 10).named("api")))
                .isFalse();
        assertThat(a.sameIdentity(a.named("other"))).isFalse();
        Limit unnamed = Limit.tokenBucket(10, Rate.perSecond(1));
        assertThat(unnamed.identity()).isEqualTo(unnamed.id());
        assertThat(unnamed.sameIdentity(Limit.tokenBucket(5, Rate.perSecond(1))))
                .isFalse();
        assertThat(unnamed.sameIdentity(a)).isFalse();
    }

    @Test
    void algorithmsParseFromTheirConfigNames() {
        assertThat(Algorithm.fromConfigName("Sliding-Window")).isEqualTo(Algorithm.SLIDING_WINDOW);
        assertThatThrownBy(() -> Algorithm.fromConfigName("leaky"))
                .hasMessageContaining("unknown algorithm 'leaky'")
                .hasMessageContaining("token_bucket, gcra, fixed_window, sliding_window, sliding_log");
    }

    @Test
    void mostRestrictiveTakesTheSmallestRemainingAndTheLongestWaits() {
        Decision a = new Decision(true, 100, 40, 0, 5);
        Decision b = new Decision(false, 10, 0, 7, 3);
        Decision c = new Decision(true, 50, 20, 0, 9);
        assertThat(Decision.mostRestrictive(List.of(a, b, c))).isEqualTo(new Decision(false, 10, 0, 7, 9));
        assertThat(a.mostRestrictive(c)).isEqualTo(new Decision(true, 50, 20, 0, 9));
        assertThatThrownBy(() -> new Decision(true, 1, -1, 0, 0)).hasMessageContaining("remaining -1");
        assertThat(new Decision(true, 1, 0, Duration.ZERO, Duration.ofSeconds(2)).resetAfterNanos())
                .isEqualTo(2_000_000_000L);
    }

    @Test
    void theSystemTickerIsOnTheEpochScaleAndNeverGoesBack() {
        long wall = Instant.now().toEpochMilli() * 1_000_000L;
        long a = Ticker.system().read();
        long b = Ticker.system().read();
        assertThat(b).isGreaterThanOrEqualTo(a);
        assertThat(Math.abs(a - wall)).isLessThan(Duration.ofSeconds(5).toNanos());
        ManualTicker m = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
        assertThat(m.read()).isEqualTo(1_767_225_600_000_000_000L);
        assertThatThrownBy(() -> m.advanceNanos(-1)).hasMessageContaining("never goes backwards");
    }
}
