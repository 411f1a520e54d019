package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.Settlement;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Costs known only afterwards on a real Redis: a reservation on an estimate, settled on the actual cost, for every
 * algorithm (charge, give back, and the cases where giving back is not defined), once, expiring by the store's clock,
 * refused when its id is pending, checked before anything is sent; one EVALSHA each.
 */
class RedisSettleTest {

    /** A minute boundary (and a second's, an hour's): the windows below start here. */
    private static final long T0 = 1_800_000_000_000_000_000L;

    private static final Duration WITHIN = Duration.ofMinutes(5);

    private static RedisServer.Raw raw;
    private static RedisCommands<byte[], byte[]> redis;

    @BeforeAll
    static void connect() {
        raw = RedisServer.shared().raw();
        redis = raw.sync();
    }

    @AfterAll
    static void disconnect() {
        raw.close();
    }

    private static String key(String name) {
        return "settle:" + UUID.randomUUID() + ":" + name;
    }

    private static RedisRateLimiter limiter(ManualTicker t) {
        return RedisServer.shared().limiter().ticker(t).build();
    }

    private static Settlement settled(long estimate, long adjusted, long remaining) {
        return new Settlement(true, estimate, adjusted, remaining);
    }

    @Test
    void aTokenBucketGivesBackTheUnspentPartAndChargesMoreIntoDebt() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        String k = key("tb");
        try (RedisRateLimiter rl = limiter(t)) {
            Decision d = rl.tryAcquireEstimate(k, l, 5, "r1", WITHIN);
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(5);
            assertThat(rl.settle(k, l, "r1", 2)).isEqualTo(settled(5, -3, 8));
            assertThat(rl.peek(k, l, 8).allowed()).isTrue();
            assertThat(rl.peek(k, l, 9).allowed()).isFalse();

            assertThat(rl.tryAcquireEstimate(k, l, 1, "r2", WITHIN).remaining()).isEqualTo(7);
            assertThat(rl.tryAcquire(k, l, 7).allowed()).isTrue();
            // 10 taken, and the reservation of 1 was really 10: 9 more, into debt (no capacity check)
            assertThat(rl.settle(k, l, "r2", 10)).isEqualTo(settled(1, 9, 0));
            Decision next = rl.tryAcquire(k, l, 1);
            assertThat(next.allowed()).isFalse();
            assertThat(next.retryAfter()).isEqualTo(Duration.ofHours(10)); // 19 owed, 1 wanted, 10 fit
        }
    }

    @Test
    void aTokenBucketKeepsNothingBeyondFull() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        String k = key("tb-full");
        try (RedisRateLimiter rl = limiter(t)) {
            assertThat(rl.tryAcquireEstimate(k, l, 5, "r", WITHIN).remaining()).isEqualTo(5);
            t.advance(Duration.ofMillis(3_500)); // 3.5 refilled: 1.5 permits' worth still owed
            assertThat(rl.settle(k, l, "r", 0)).isEqualTo(settled(5, -1, 10));
            assertThat(rl.peek(k, l, 10).allowed()).isTrue();
        }
    }

    @Test
    void gcraSettlesAsTheTokenBucket() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.gcra(Rate.perSecond(3), 6); // an interval of 333,333,333⅓ ns
        String k = key("gcra");
        try (RedisRateLimiter rl = limiter(t)) {
            assertThat(rl.tryAcquireEstimate(k, l, 4, "a", WITHIN).remaining()).isEqualTo(2);
            assertThat(rl.settle(k, l, "a", 1)).isEqualTo(settled(4, -3, 5));
            assertThat(rl.tryAcquireEstimate(k, l, 5, "b", WITHIN).remaining()).isZero();
            assertThat(rl.settle(k, l, "b", 6)).isEqualTo(settled(5, 1, 0));
            Decision d = rl.tryAcquire(k, l, 1);
            assertThat(d.allowed()).isFalse();
            assertThat(d.retryAfter()).isEqualTo(Duration.ofNanos(666_666_667)); // 7 owed of 6: 2 intervals
        }
    }

    @Test
    void aFixedWindowGivesBackWhileTheReservationsWindowIsCurrentAndChargesTheCurrentOne() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.fixedWindow(10, Duration.ofMinutes(1));
        String k = key("fw");
        try (RedisRateLimiter rl = limiter(t)) {
            rl.tryAcquireEstimate(k, l, 6, "same", WITHIN);
            t.advance(Duration.ofSeconds(30));
            assertThat(rl.settle(k, l, "same", 1)).isEqualTo(settled(6, -5, 9));
            rl.tryAcquireEstimate(k, l, 3, "ended", WITHIN);
            rl.tryAcquireEstimate(k, l, 2, "more", WITHIN);
            assertThat(rl.tryAcquire(k, l, 4).remaining()).isZero(); // 1 + 3 + 2 + 4
            assertThat(rl.settle(k, l, "more", 7)).isEqualTo(settled(2, 5, 0)); // 15 in a window of 10
            t.advance(Duration.ofSeconds(30)); // the next window
            assertThat(rl.settle(k, l, "ended", 0)).as("its window ended").isEqualTo(settled(3, 0, 10));
            rl.tryAcquireEstimate(k, l, 2, "late", WITHIN);
            t.advance(Duration.ofMinutes(1));
            assertThat(rl.settle(k, l, "late", 5))
                    .as("charged in the window of the settle")
                    .isEqualTo(settled(2, 3, 7));
        }
    }

    @Test
    void aSlidingWindowGivesBackFromTheCurrentOrPreviousWindowOnly() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.slidingWindow(10, Duration.ofMinutes(1));
        String k = key("sw");
        try (RedisRateLimiter rl = limiter(t)) {
            rl.tryAcquireEstimate(k, l, 6, "cur", WITHIN);
            assertThat(rl.settle(k, l, "cur", 2)).isEqualTo(settled(6, -4, 8));
            rl.tryAcquireEstimate(k, l, 4, "prev", WITHIN); // window k: 6 counted
            rl.tryAcquireEstimate(k, l, 1, "old", WITHIN);
            t.advance(Duration.ofSeconds(60 + 15)); // window k+1, a quarter in: the previous weighs 3/4
            // 7 in the previous window, 3 given back: 4 there, weighing ceil(4 * 3/4) = 3
            assertThat(rl.settle(k, l, "prev", 1)).isEqualTo(settled(4, -3, 7));
            rl.tryAcquireEstimate(k, l, 2, "up", WITHIN); // current 2: estimate 3 + 2
            assertThat(rl.settle(k, l, "up", 4)).isEqualTo(settled(2, 2, 3)); // 10 - 3 - 4
            t.advance(Duration.ofMinutes(1)); // window k+2: window k is neither current nor previous
            assertThat(rl.settle(k, l, "old", 0)).as("counted two windows ago").isEqualTo(settled(1, 0, 7));
        }
    }

    @Test
    void aSlidingLogGivesBackFromTheReservationsOwnEntryWhileItIsLogged() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.slidingLog(10, Duration.ofMinutes(1));
        String k = key("sl");
        try (RedisRateLimiter rl = limiter(t)) {
            rl.tryAcquireEstimate(k, l, 6, "own", WITHIN);
            t.advance(Duration.ofSeconds(10));
            rl.tryAcquire(k, l, 1);
            assertThat(rl.settle(k, l, "own", 2)).isEqualTo(settled(6, -4, 7));
            rl.tryAcquireEstimate(k, l, 2, "more", WITHIN);
            t.advance(Duration.ofSeconds(10));
            assertThat(rl.settle(k, l, "more", 5)).as("3 more logged now").isEqualTo(settled(2, 3, 2));
            rl.tryAcquireEstimate(k, l, 1, "gone", Duration.ofHours(1));
            t.advance(Duration.ofMinutes(1)); // every entry has slid out
            assertThat(rl.settle(k, l, "gone", 0)).as("its entry slid out").isEqualTo(settled(1, 0, 10));
        }
        // the log holds exactly what the settles left: 2 at T0, 1 + 2 at T0+10s, 3 + 1 at T0+20s
        try (RedisRateLimiter rl =
                limiter(ManualTicker.atEpochNanos(T0 + Duration.ofSeconds(20).toNanos()))) {
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(10 - 2 - 1 - 2 - 3 - 1);
        }
    }

    @Test
    void aSettleIsAppliedOnceAndADeniedEstimateLeavesNothingPending() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.tokenBucket(3, Rate.perHour(1));
        String k = key("once");
        try (RedisRateLimiter rl = limiter(t)) {
            rl.tryAcquireEstimate(k, l, 2, "r", WITHIN);
            assertThat(rl.settle(k, l, "r", 1)).isEqualTo(settled(2, -1, 2));
            assertThat(rl.settle(k, l, "r", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.settleAsync(k, l, "r", 3).join()).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(2);
            assertThat(rl.settle(k, l, "never", 1)).isEqualTo(Settlement.NOT_PENDING);

            assertThat(rl.tryAcquireEstimate(k, l, 3, "denied", WITHIN).allowed())
                    .isFalse();
            assertThat(redis.exists(RedisKeys.pending("sluice:", k, l, "denied")))
                    .isZero();
            assertThat(rl.settle(k, l, "denied", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(2);
        }
    }

    @Test
    void anUnsettledReservationExpiresBySettleWithinOnTheStoresClockAndItsEstimateStands() {
        ManualTicker t = ManualTicker.atEpochNanos(T0 + 123_000); // Redis keeps microseconds
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        String k = key("expiry");
        Duration within = Duration.ofSeconds(10);
        try (RedisRateLimiter rl = limiter(t)) {
            rl.tryAcquireEstimate(k, l, 4, "r", within);
            rl.tryAcquireEstimate(k, l, 4, "s", within);
            t.advance(within.minusNanos(1_000));
            assertThat(rl.settle(k, l, "r", 0)).isEqualTo(settled(4, -4, 6));
            t.advanceNanos(1_000);
            assertThat(rl.settle(k, l, "s", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(6);
            assertThat(redis.exists(RedisKeys.pending("sluice:", k, l, "s")))
                    .as("the expired record is cleaned")
                    .isZero();
            // an id whose reservation has expired may be used again
            assertThat(rl.tryAcquireEstimate(k, l, 1, "s", within).remaining()).isEqualTo(5);
        }
    }

    @Test
    void theRecordExpiresInRedisAfterSettleWithin() {
        Limit l = Limit.fixedWindow(10, Duration.ofMinutes(1));
        String k = key("pttl");
        try (RedisRateLimiter rl = RedisServer.shared().limiter().build()) { // Redis's own clock
            rl.tryAcquireEstimate(k, l, 1, "r", Duration.ofSeconds(30));
            long pttl = redis.pttl(RedisKeys.pending("sluice:", k, l, "r"));
            assertThat(pttl).isBetween(1L, 30_000L);
            rl.tryAcquireEstimate(k, l, 1, "short", Duration.ofNanos(1_000_001)); // rounded up to 2 ms
            assertThat(redis.pttl(RedisKeys.pending("sluice:", k, l, "short"))).isIn(-2L, 0L, 1L, 2L);
        }
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        try (RedisRateLimiter rl = limiter(t)) { // a client ticker: kept at least the least expiry (one hour)
            rl.tryAcquireEstimate(k, l, 1, "ticker", Duration.ofSeconds(30));
            assertThat(redis.pttl(RedisKeys.pending("sluice:", k, l, "ticker"))).isBetween(3_500_000L, 3_600_000L);
        }
    }

    @Test
    void aPendingIdIsRefusedAtomicallyAndNothingIsTaken() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.slidingWindow(10, Duration.ofMinutes(1));
        String k = key("dup");
        try (RedisRateLimiter rl = limiter(t)) {
            rl.tryAcquireEstimate(k, l, 4, "req-1", WITHIN);
            assertThatThrownBy(() -> rl.tryAcquireEstimate(k, l, 3, "req-1", WITHIN))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reservation 'req-1' is already pending on key '" + k + "'")
                    .hasMessageContaining("use a new id per reservation");
            assertThat(rl.tryAcquireEstimateAsync(k, l, 3, "req-1", WITHIN))
                    .failsWithin(Duration.ofSeconds(10))
                    .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .withCauseInstanceOf(IllegalArgumentException.class);
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(6);
            // the same id on another key or limit is another reservation
            assertThat(rl.tryAcquireEstimate(k + "-other", l, 3, "req-1", WITHIN)
                            .allowed())
                    .isTrue();
            Limit other = Limit.slidingWindow(20, Duration.ofMinutes(1));
            assertThat(rl.tryAcquireEstimate(k, other, 3, "req-1", WITHIN).allowed())
                    .isTrue();
            // settled, the id is free again
            assertThat(rl.settle(k, l, "req-1", 4)).isEqualTo(settled(4, 0, 6));
            assertThat(rl.tryAcquireEstimate(k, l, 3, "req-1", WITHIN).remaining())
                    .isEqualTo(3);
        }
    }

    @Test
    void badInputThrowsBeforeAnythingIsSent() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        String k = key("bad");
        try (RedisRateLimiter rl = limiter(t)) {
            redis.configResetstat();
            List<Runnable> bad = List.of(
                    () -> rl.tryAcquireEstimate(k, l, 0, "r", WITHIN),
                    () -> rl.tryAcquireEstimate(k, l, 11, "r", WITHIN),
                    () -> rl.tryAcquireEstimate(k, l, 1, "", WITHIN),
                    () -> rl.tryAcquireEstimate(k, l, 1, "with space", WITHIN),
                    () -> rl.tryAcquireEstimate(k, l, 1, "x".repeat(129), WITHIN),
                    () -> rl.tryAcquireEstimate(k, l, 1, "r", Duration.ZERO),
                    () -> rl.tryAcquireEstimate(k, l, 1, "r", Duration.ofHours(25)),
                    () -> rl.tryAcquireEstimate("", l, 1, "r", WITHIN),
                    () -> rl.tryAcquireEstimateAsync(k, l, 1, "r", Duration.ofSeconds(-1))
                            .join(),
                    () -> rl.settle(k, l, "r", -1),
                    () -> rl.settle(k, l, "r", 11),
                    () -> rl.settle(k, l, "é", 1),
                    () -> rl.settleAsync(k, l, "", 1).join(),
                    () -> rl.settle("", l, "r", 1));
            for (Runnable r : bad) {
                assertThatThrownBy(r::run).isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> rl.settle(k, l, "r", 11))
                    .hasMessageContaining("actual cost 11")
                    .hasMessageContaining("capacity 10");
            assertThatThrownBy(() -> rl.tryAcquireEstimate(k, l, 1, "a b", WITHIN))
                    .hasMessageContaining("reservation id 'a b'");
            String stats = redis.info("commandstats");
            assertThat(RedisRateLimiterTest.calls(stats, "evalsha"))
                    .as("nothing sent")
                    .isZero();
            assertThat(redis.exists(RedisKeys.of("sluice:", k, l))).isZero();
        }
    }

    @Test
    void theRecordSharesTheStatesHashSlotAndCollidesWithNoOtherKey() {
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        Limit named = Limit.tokenBucket(10, Rate.perHour(1)).named("a:{b}~%");
        for (String k : List.of("user:42", "{tenant}:user", "a}b", "{}x", "ü{ñ}")) {
            for (String id : List.of("r", "{x}", "a:b", "}{", "%7B", "~r:")) {
                for (Limit lim : List.of(l, named)) {
                    byte[] record = RedisKeys.pending("sluice:", k, lim, id);
                    assertThat(RedisKeys.slot(record)).isEqualTo(RedisKeys.slot(RedisKeys.of("sluice:", k, lim)));
                }
            }
        }
        // one record per (key, limit, id): ids and keys that share text do not meet
        assertThat(new String(RedisKeys.pending("sluice:", "{a}:b", l, "c"), StandardCharsets.UTF_8))
                .isNotEqualTo(new String(RedisKeys.pending("sluice:", "{a}", l, "b:c"), StandardCharsets.UTF_8))
                .isEqualTo("sluice:~r:c:" + l.id() + ":{a}:b");
        assertThat(new String(RedisKeys.pending("sluice:", "{a}", l, "b:c"), StandardCharsets.UTF_8))
                .isEqualTo("sluice:~r:b%3Ac:" + l.id() + ":{a}");
    }

    @Test
    void onRedisClusterTheRecordLivesWithItsStateOnEveryMaster() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        String base = "settle-spread:" + UUID.randomUUID() + ":";
        List<RedisCommands<byte[], byte[]>> nodes = RedisCluster.shared().admin;
        Set<Integer> used = new HashSet<>();
        try (RedisRateLimiter rl = RedisRateLimiter.builder(
                        RedisCluster.shared().uri())
                .timeBudget(RedisServer.GENEROUS_BUDGET)
                .ticker(t)
                .build()) {
            assertThat(rl.isCluster()).isTrue();
            for (int i = 0; i < 30; i++) {
                String k = base + i;
                String id = "req-{" + i + "}"; // braces in the id do not move the record
                assertThat(rl.tryAcquireEstimate(k, l, 6, id, WITHIN).remaining())
                        .isEqualTo(4);
                byte[] state = RedisKeys.of("sluice:", k, l);
                byte[] record = RedisKeys.pending("sluice:", k, l, id);
                int slot = RedisKeys.slot(state);
                assertThat(RedisKeys.slot(record)).isEqualTo(slot);
                int holders = 0;
                for (int n = 0; n < nodes.size(); n++) {
                    List<String> keys = nodes.get(n).clusterGetKeysInSlot(slot, 1000).stream()
                            .map(b -> new String(b, StandardCharsets.UTF_8))
                            .toList();
                    if (keys.contains(new String(state, StandardCharsets.UTF_8))) {
                        assertThat(keys).contains(new String(record, StandardCharsets.UTF_8));
                        used.add(n);
                        holders++;
                    }
                }
                assertThat(holders)
                        .as("one master holds the state and its record")
                        .isEqualTo(1);
                assertThat(rl.settleAsync(k, l, id, 2).join()).isEqualTo(settled(6, -4, 8));
                assertThat(rl.settle(k, l, id, 2)).isEqualTo(Settlement.NOT_PENDING);
            }
        }
        assertThat(used).as("keys on every master").hasSize(3);
    }

    @Test
    void anEstimateAndASettleAreOneEvalshaEach() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit[] limits = {
            Limit.tokenBucket(10, Rate.perSecond(1)),
            Limit.gcra(Rate.perSecond(3), 10),
            Limit.fixedWindow(10, Duration.ofMinutes(1)),
            Limit.slidingWindow(10, Duration.ofMinutes(1)),
            Limit.slidingLog(10, Duration.ofMinutes(1))
        };
        String k = key("count");
        try (RedisRateLimiter rl = limiter(t)) {
            redis.configResetstat();
            for (Limit l : limits) {
                rl.tryAcquireEstimate(k, l, 3, "r", WITHIN);
                rl.settle(k, l, "r", 5);
                rl.settleAsync(k, l, "r", 5).join();
                rl.tryAcquireEstimateAsync(k, l, 3, "s", WITHIN).join();
                rl.settle(k, l, "s", 1);
            }
            String stats = redis.info("commandstats");
            assertThat(RedisRateLimiterTest.calls(stats, "evalsha")).isEqualTo(5L * limits.length);
            assertThat(RedisRateLimiterTest.calls(stats, "eval")).isZero();
        }
    }

    @Test
    void aNamedTokenBucketWhoseNumbersChangedSettlesUnderTheNewOnes() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit before = Limit.tokenBucket(10, Rate.perHour(1)).named("llm");
        Limit after = Limit.tokenBucket(20, Rate.perHour(2)).named("llm"); // P halved: each permit owes 30 min
        String k = key("named");
        try (RedisRateLimiter rl = limiter(t)) {
            rl.tryAcquireEstimate(k, before, 6, "r", WITHIN); // 6 hours owed
            // read under the new numbers, the 6 permits owed are 6 of theirs (Inheritance), all given back
            assertThat(rl.settle(k, after, "r", 0)).isEqualTo(settled(6, -6, 20));
            rl.tryAcquireEstimate(k, after, 4, "s", WITHIN);
            assertThat(rl.settle(k, before, "s", 1)).isEqualTo(settled(4, -3, 9));
        }
    }

    @Test
    void aRecordKeyOfAnotherTypeFailsNamingIt() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        Limit l = Limit.fixedWindow(10, Duration.ofMinutes(1));
        String k = key("wrong");
        byte[] record = RedisKeys.pending("sluice:", k, l, "r");
        redis.lpush(record, "x".getBytes(StandardCharsets.UTF_8));
        try (RedisRateLimiter rl = limiter(t)) {
            assertThatThrownBy(() -> rl.settle(k, l, "r", 1))
                    .isInstanceOfSatisfying(
                            RedisStoreException.class,
                            e -> assertThat(e.degradation()).isEqualTo(Degradation.STORE_ERROR))
                    .hasMessageContaining("pending reservation");
            assertThatThrownBy(() -> rl.tryAcquireEstimate(k, l, 1, "r", WITHIN))
                    .isInstanceOf(RedisStoreException.class);
            assertThat(redis.exists(RedisKeys.of("sluice:", k, l)))
                    .as("nothing taken")
                    .isZero();
        }
    }
}
