package dev.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimitFieldsTest {

    @Test
    void policyOfATokenBucketGivesTheTimeToRefillFromEmpty() {
        StringBuilder sb = new StringBuilder();
        RateLimitFields.appendPolicy(sb, "per-ip", Limit.tokenBucket(10, Rate.perSecond(4)));
        RateLimitFields.appendPolicy(sb, "per-user", Limit.fixedWindow(100, Duration.ofMinutes(1)));
        assertThat(sb).hasToString("\"per-ip\";q=10;w=3, \"per-user\";q=100;w=60");
    }

    @Test
    void stateRoundsSecondsUp() {
        StringBuilder sb = new StringBuilder();
        RateLimitFields.appendState(sb, "a", new Decision(true, 10, 7, 0, 1_000_000_001L));
        assertThat(sb).hasToString("\"a\";r=7;t=2");
    }

    @Test
    void retryAfterIsAtLeastOneSecondAndNeverEarly() {
        assertThat(RateLimitFields.retryAfterSeconds(new Decision(false, 1, 0, 1, 1)))
                .isEqualTo(1);
        assertThat(RateLimitFields.retryAfterSeconds(new Decision(false, 1, 0, 2_000_000_001L, 1)))
                .isEqualTo(3);
    }

    @Test
    void namesAreEscapedAndNonAsciiReplaced() {
        assertThat(RateLimitFields.sfString(new StringBuilder(), "a\"b\\cé")).hasToString("\"a\\\"b\\\\c?\"");
    }
}
