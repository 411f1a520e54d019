package dev.sluice.server.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * envoy's limiter arithmetic, case by case as envoyproxy/ratelimit's own tests pin it: each expected value is the one
 * envoy's test asserts for the same counts (the counter's value before and after the hits, as its Redis mock
 * answers).
 */
class EnvoyStatsTest {
    private final EnvoyStats stats = new EnvoyStats();

    private long stat(String key, String name) {
        return stats.total("ratelimit.service.rate_limit." + key + "." + name);
    }

    private void assertStats(String key, long total, long over, long near, long within) {
        assertThat(new long[] {
                    stat(key, "total_hits"), stat(key, "over_limit"), stat(key, "near_limit"), stat(key, "within_limit")
                })
                .as("%s: total_hits, over_limit, near_limit, within_limit", key)
                .containsExactly(total, over, near, within);
    }

    /** envoy's test/redis/fixed_cache_impl_test.go, TestNearLimit: the same counts, the same stats. */
    @Test
    void nearAndOverLimitCountTheHitsPastEachThreshold() {
        // limit 15 (near threshold 12): INCRBY 1 answers 11, then 13, then 16
        stats.counted("domain.key4_value4", false, 15, 1, 10, 11);
        assertStats("domain.key4_value4", 1, 0, 0, 1);
        stats.counted("domain.key4_value4", false, 15, 1, 12, 13);
        assertStats("domain.key4_value4", 2, 0, 1, 2);
        // "We went OVER_LIMIT, but the near_limit counter only increases when we are near limit"
        stats.counted("domain.key4_value4", false, 15, 1, 15, 16);
        assertStats("domain.key4_value4", 3, 1, 1, 2);

        // hits_addend > 1: all of it under limit, under near limit (limit 20: +3 -> 5)
        stats.counted("domain.key5_value5", false, 20, 3, 2, 5);
        assertStats("domain.key5_value5", 3, 0, 0, 3);
        // all of it under limit, some over near limit (limit 8, threshold 6: +2 -> 7)
        stats.counted("domain.key6_value6", false, 8, 2, 5, 7);
        assertStats("domain.key6_value6", 2, 0, 1, 2);
        // all of it under limit, all of it over near limit (limit 20, threshold 16: +3 -> 19)
        stats.counted("domain.key7_value7", false, 20, 3, 16, 19);
        assertStats("domain.key7_value7", 3, 0, 3, 3);
        // some of it over limit, all of it over near limit (limit 20: +3 -> 22)
        stats.counted("domain.key8_value8", false, 20, 3, 19, 22);
        assertStats("domain.key8_value8", 3, 2, 1, 0);
        // some of it over limit, some of it over near limit (limit 20: +7 -> 22)
        stats.counted("domain.key9_value9", false, 20, 7, 15, 22);
        assertStats("domain.key9_value9", 7, 2, 4, 0);
        // all of it over limit (limit 10: +3 -> 30)
        stats.counted("domain.key10_value10", false, 10, 3, 27, 30);
        assertStats("domain.key10_value10", 3, 3, 0, 0);
    }

    /** envoy's test/limiter/base_limiter_test.go, TestGetResponseStatusOverLimitShadowMode and BelowLimitShadowMode. */
    @Test
    void shadowModeCountsTheHitsOverTheLimitOnly() {
        stats.counted("key_value", true, 5, 1, 2, 7); // limitBeforeIncrease 2, limitAfterIncrease 7, limit 5
        assertThat(stat("key_value", "over_limit")).isEqualTo(2);
        assertThat(stat("key_value", "near_limit")).isEqualTo(1);
        assertThat(stat("key_value", "shadow_mode")).isEqualTo(2);

        stats.counted("below", true, 10, 1, 5, 6); // under the limit and its near threshold (9)
        assertThat(stat("below", "within_limit")).isEqualTo(1);
        assertThat(stat("below", "near_limit")).isZero();
        assertThat(stat("below", "shadow_mode")).isZero();
    }

    @Test
    void aRuleThatBansCountsEveryHitOverAndACheckCountsNothing() {
        stats.counted("d.banned", false, 0, 4, 0, 4); // requests_per_unit: 0
        assertStats("d.banned", 4, 4, 0, 0);
        stats.counted("d.checked", false, 10, 0, 3, 3); // hits_addend 0: envoy adds 0 everywhere
        assertThat(stats.total("ratelimit.service.rate_limit.d.checked.total_hits"))
                .isZero();
        StringBuilder text = new StringBuilder();
        stats.writeText(text);
        assertThat(text.toString()).doesNotContain("d.checked");
    }

    /** envoy computes the threshold as float32(limit) * float32(ratio), floored. */
    @Test
    void theNearThresholdIsSinglePrecisionAndFloored() {
        assertThat(stats.nearThreshold(30)).isEqualTo(24);
        assertThat(stats.nearThreshold(5)).isEqualTo(4);
        assertThat(stats.nearThreshold(1)).isZero();
        assertThat(new EnvoyStats(0.9f).nearThreshold(10)).isEqualTo(9);
        assertThatThrownBy(() -> new EnvoyStats(1.5f))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1.5")
                .hasMessageContaining("e.g. 0.8");
    }

    /** envoy's src/utils/utilities.go SanitizeStatName. */
    @Test
    void statNamesAreSanitizedAsEnvoyDoes() {
        stats.counted("d.remote_address_10.0.0.1.port_a:b|c", false, 10, 1, 0, 1);
        assertThat(stats.total("ratelimit.service.rate_limit.d.remote_address_10_0_0_1.port_a_b_c.total_hits"))
                .isEqualTo(1);
    }

    @Test
    void keysPastTheBoundAreCountedTogether() {
        for (int i = 0; i < EnvoyStats.MAX_KEYS + 5; i++) {
            stats.counted("d.k_" + i, false, 10, 1, 0, 1);
        }
        assertThat(stat("d.k_0", "total_hits")).isEqualTo(1);
        assertThat(stat("d.k_" + (EnvoyStats.MAX_KEYS + 1), "total_hits")).isZero();
        assertThat(stat(EnvoyStats.OTHER_KEY, "total_hits")).isEqualTo(5);
    }

    @Test
    void theTextFormIsEnvoysDebugVariables() {
        stats.configLoad(true);
        stats.callFailed(false);
        stats.counted("d.k", false, 10, 2, 0, 2);
        StringBuilder text = new StringBuilder();
        stats.writeText(text);
        assertThat(text.toString()).isEqualTo("""
                        ratelimit.service.call.should_rate_limit.service_error: 1
                        ratelimit.service.config_load_success: 1
                        ratelimit.service.rate_limit.d.k.total_hits: 2
                        ratelimit.service.rate_limit.d.k.within_limit: 2
                        """);
    }
}
