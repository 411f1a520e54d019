package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** What InFlightTck cannot see on Redis: the key's layout, its expiry on Redis's own clock, leases on TIME. */
class RedisInFlightTest {

    /** The first line of Redis's reply to an inline command, without its type mark: {@code zset}, {@code 2}. */
    private static String redis(String command) {
        String reply = RedisServer.shared().command(null, command);
        return reply.substring(1, reply.indexOf("\r\n"));
    }

    private static String key(String name) {
        return "test:" + UUID.randomUUID() + ":" + name;
    }

    @Test
    void theSlotsAreOneSortedSetThatExpiresWithItsLatestLeaseAndGoesWithItsLastSlot() {
        String k = key("layout");
        String slots = new String(RedisKeys.inFlight("sluice:", k), StandardCharsets.UTF_8);
        assertThat(slots).isEqualTo("sluice:in-flight{" + k + "}");
        try (RedisRateLimiter rl = RedisServer.shared().limiter().build()) {
            InFlightLimiter s = rl.inFlight();
            assertThat(s.tryAcquire(k, 3, "short", Duration.ofSeconds(5)).allowed())
                    .isTrue();
            assertThat(s.tryAcquire(k, 3, "long", Duration.ofSeconds(20)).allowed())
                    .isTrue();
            assertThat(redis("TYPE " + slots)).isEqualTo("zset");
            assertThat(redis("ZCARD " + slots)).isEqualTo("2");
            assertThat(Long.parseLong(redis("PTTL " + slots))).isBetween(20_000L - 2_000, 20_000L);
            assertThat(s.release(k, "long")).isTrue();
            assertThat(Long.parseLong(redis("PTTL " + slots)))
                    .as("the latest lease left is 5 s")
                    .isBetween(1L, 5_000L);
            assertThat(s.release(k, "short")).isTrue();
            assertThat(redis("EXISTS " + slots)).as("no slot left: no key").isEqualTo("0");
        }
    }

    @Test
    void onRedissClockALeaseEndsAndTheKeyIsForgottenWithNobodyReleasing() {
        String k = key("dead-holder");
        String slots = new String(RedisKeys.inFlight("sluice:", k), StandardCharsets.UTF_8);
        try (RedisRateLimiter rl = RedisServer.shared().limiter().build()) {
            InFlightLimiter s = rl.inFlight();
            assertThat(s.tryAcquire(k, 1, "dies", Duration.ofMillis(300)).allowed())
                    .isTrue();
            assertThat(s.tryAcquire(k, 1, "waits", Duration.ofMillis(300)).allowed())
                    .isFalse();
            Eventually.await(
                    Duration.ofSeconds(10),
                    "Redis dropped the dead holder's key",
                    () -> redis("EXISTS " + slots).equals("0"));
            assertThat(s.tryAcquire(k, 1, "waits", Duration.ofSeconds(30)).allowed())
                    .isTrue();
            assertThat(s.release(k, "dies")).isFalse();
        }
    }

    @Test
    void theSlotsShareTheKeysHashSlotAndNoLimitsKey() {
        Limit tb = Limit.tokenBucket(10, Rate.perSecond(1));
        for (String k : List.of("user:42", "{tenant}:user:42", "a{}b", "}", "x")) {
            byte[] slots = RedisKeys.inFlight("sluice:", k);
            assertThat(RedisKeys.slot(slots)).as(k).isEqualTo(RedisKeys.slot(RedisKeys.of("sluice:", k, tb)));
            assertThat(slots).as(k).isNotEqualTo(RedisKeys.of("sluice:", k, tb));
        }
    }
}
