package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import dev.sluice.tck.Tck;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the conformance suite cannot see: Redis's clock, expiry, scripts, wrong types, keys, the wire. */
class RedisRateLimiterTest {

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
        return "test:" + UUID.randomUUID() + ":" + name;
    }

    private static byte[] redisKey(String key, Limit limit) {
        return RedisKeys.of("sluice:", key, limit);
    }

    private static RedisRateLimiter serverClock() {
        return RedisServer.shared().limiter().build();
    }

    @Test
    void aCallbackExecutorRunsCallbacksOffTheIoThreadSoTheyMayCallTheLimiterSynchronously() throws Exception {
        java.util.concurrent.ExecutorService pool =
                java.util.concurrent.Executors.newFixedThreadPool(2, r -> new Thread(r, "sluice-callback"));
        // the executor holds each completion until the test has attached its callback: a callback attached
        // to a future that is already complete runs on the attaching thread, as with any CompletableFuture
        java.util.concurrent.atomic.AtomicReference<java.util.concurrent.CountDownLatch> gate =
                new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.Executor callbacks = r -> {
            java.util.concurrent.CountDownLatch g = gate.get();
            pool.execute(() -> {
                try {
                    g.await(5, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                r.run();
            });
        };
        Limit l = Limit.tokenBucket(100, Rate.perHour(1));
        String k = key("callback");
        String wrong = key("callback-wrong-type");
        redis.lpush(redisKey(wrong, l), "x".getBytes(StandardCharsets.UTF_8));
        try (RedisRateLimiter rl = RedisServer.shared()
                .limiter()
                .ticker(Tck.ticker())
                .callbackExecutor(callbacks)
                .build()) {
            for (int i = 0; i < 20; i++) {
                // a blocking callback, and a synchronous call of the same limiter inside it
                gate.set(new java.util.concurrent.CountDownLatch(1));
                CompletableFuture<String> f = rl.tryAcquireAsync(k, l, 1)
                        .thenApply(d -> Thread.currentThread().getName() + " "
                                + rl.tryAcquire(k, l).allowed());
                gate.get().countDown();
                assertThat(f.get(5, java.util.concurrent.TimeUnit.SECONDS)).isEqualTo("sluice-callback true");
            }
            // a failed future completes on the executor too
            gate.set(new java.util.concurrent.CountDownLatch(1));
            CompletableFuture<String> failed = rl.tryAcquireAsync(List.of(Permit.of(wrong, l)))
                    .handle((d, e) -> Thread.currentThread().getName() + " "
                            + e.getClass().getSimpleName());
            gate.get().countDown();
            assertThat(failed.get(5, java.util.concurrent.TimeUnit.SECONDS)).startsWith("sluice-callback ");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void decidesWithRedisTimeWhenNoTickerIsGiven() {
        Limit l = Limit.tokenBucket(3, Rate.perHour(3)); // one token back every 20 minutes
        String k = key("real-clock");
        try (RedisRateLimiter rl = serverClock()) {
            assertThat(rl.isCluster()).isFalse();
            for (int i = 2; i >= 0; i--) {
                Decision d = rl.tryAcquire(k, l);
                assertThat(d.allowed()).isTrue();
                assertThat(d.remaining()).isEqualTo(i);
            }
            Decision denied = rl.tryAcquire(k, l);
            assertThat(denied.allowed()).isFalse();
            // 20 minutes minus the (tiny) time since the first call, exact to the microsecond Redis keeps
            assertThat(denied.retryAfterNanos())
                    .isBetween(
                            Duration.ofMinutes(19).toNanos(),
                            Duration.ofMinutes(20).toNanos());
            assertThat(denied.resetAfterNanos())
                    .isBetween(
                            Duration.ofMinutes(59).toNanos(),
                            Duration.ofMinutes(60).toNanos());
            assertThat(denied.retryAfterNanos() % 1000)
                    .as("Redis time is whole microseconds")
                    .isZero();
        }
    }

    @Test
    void everyWrittenKeyExpiresWhenItWouldBeFresh() {
        try (RedisRateLimiter rl = serverClock()) {
            Limit tb = Limit.tokenBucket(10, Rate.perSecond(1));
            String k1 = key("ttl-tb");
            Decision d = rl.tryAcquire(k1, tb, 4);
            assertPttlCovers(redisKey(k1, tb), d.resetAfterNanos());

            Limit fw = Limit.fixedWindow(5, Duration.ofMinutes(1));
            String k2 = key("ttl-fw");
            d = rl.tryAcquire(k2, fw);
            assertPttlCovers(redisKey(k2, fw), d.resetAfterNanos());

            Limit sw = Limit.slidingWindow(5, Duration.ofSeconds(30));
            String k3 = key("ttl-sw");
            d = rl.tryAcquire(k3, sw);
            assertPttlCovers(redisKey(k3, sw), d.resetAfterNanos());

            Limit sl = Limit.slidingLog(5, Duration.ofSeconds(7));
            String k4 = key("ttl-sl");
            d = rl.tryAcquire(k4, sl, 2);
            assertPttlCovers(redisKey(k4, sl), d.resetAfterNanos());
            assertThat(redis.type(redisKey(k4, sl))).isEqualTo("zset");

            // and Redis really drops it: a 30 ms bucket is gone shortly after
            Limit quick = Limit.gcra(Rate.of(1, Duration.ofMillis(30)), 1);
            String k5 = key("ttl-gone");
            assertThat(rl.tryAcquire(k5, quick).allowed()).isTrue();
            assertThat(redis.exists(redisKey(k5, quick))).isEqualTo(1);
            // Redis's own expiry, on its own clock
            Eventually.await(Duration.ofSeconds(5), "the key expired", () -> redis.exists(redisKey(k5, quick)) == 0);
            // a denied call writes nothing, so it creates no key
            Limit one = Limit.fixedWindow(1, Duration.ofHours(1));
            String k6 = key("denied");
            rl.tryAcquire(List.of(Permit.of(k6, one), Permit.of(k6, one)));
            assertThat(redis.exists(redisKey(k6, one))).isZero();
        }
    }

    /** PTTL is the decision's resetAfter rounded up to the millisecond, less the time since. */
    private static void assertPttlCovers(byte[] k, long resetAfterNanos) {
        long pttl = redis.pttl(k);
        long ceilMs = (resetAfterNanos + 999_999) / 1_000_000;
        assertThat(pttl)
                .as("PTTL of %s", new String(k, StandardCharsets.UTF_8))
                .isLessThanOrEqualTo(ceilMs)
                .isGreaterThan(ceilMs - 2000);
    }

    @Test
    void clientTickerKeysAreKeptAtLeastTheMinimumExpiry() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perSecond(10));
        String k = key("ticker-ttl");
        try (RedisRateLimiter rl = RedisServer.shared().limiter().ticker(t).build()) {
            rl.tryAcquire(k, l);
            assertThat(redis.pttl(redisKey(k, l)))
                    .isGreaterThan(Duration.ofMinutes(59).toMillis());
        }
        String k2 = key("ticker-ttl-zero");
        Limit slow = Limit.tokenBucket(10, Rate.perMinute(1));
        try (RedisRateLimiter rl = RedisServer.shared()
                .limiter()
                .ticker(t)
                .minExpiry(Duration.ZERO)
                .build()) {
            rl.tryAcquire(k2, slow);
            assertThat(redis.pttl(redisKey(k2, slow))).isBetween(1L, 60_000L);
        }
    }

    @Test
    void scriptFlushMidRunLosesNoDecision() throws Exception {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(300, Rate.perHour(1));
        String k = key("flush");
        try (RedisRateLimiter rl = RedisServer.shared().limiter().ticker(t).build()) {
            for (int i = 0; i < 100; i++) {
                if (i % 25 == 10) {
                    redis.scriptFlush();
                }
                Decision d = rl.tryAcquire(k, l);
                assertThat(d.allowed()).isTrue();
                assertThat(d.remaining()).isEqualTo(299 - i);
            }
            // the same with 250 calls in flight while the scripts vanish
            List<CompletableFuture<Decision>> inFlight = new ArrayList<>();
            for (int i = 0; i < 250; i++) {
                if (i == 100) {
                    redis.scriptFlush();
                }
                inFlight.add(rl.tryAcquireAsync(k, l, 1));
            }
            long allowed = 0;
            for (CompletableFuture<Decision> f : inFlight) {
                allowed += f.get().allowed() ? 1 : 0;
            }
            assertThat(allowed).isEqualTo(200);
            assertThat(rl.tryAcquire(k, l).allowed()).isFalse();
        }
    }

    @Test
    void oneCommandPerDecision() {
        ManualTicker t = Tck.ticker();
        try (RedisRateLimiter rl = RedisServer.shared().limiter().ticker(t).build()) {
            Limit[] limits = {
                Limit.tokenBucket(5, Rate.perSecond(1)),
                Limit.fixedWindow(5, Duration.ofSeconds(1)),
                Limit.slidingWindow(5, Duration.ofSeconds(1)),
                Limit.slidingLog(5, Duration.ofSeconds(1))
            };
            redis.configResetstat();
            String k = key("count");
            int decisions = 0;
            for (int i = 0; i < 10; i++) {
                for (Limit l : limits) {
                    rl.tryAcquire(k, l);
                    decisions++;
                }
                rl.tryAcquire(List.of(Permit.of(k, limits[0]), Permit.of(k, limits[1]), Permit.of(k, limits[3])));
                decisions++;
            }
            String stats =
                    new String(redis.info("commandstats").getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
            assertThat(calls(stats, "evalsha")).isEqualTo(decisions);
            assertThat(calls(stats, "eval")).isZero();
            assertThat(calls(stats, "script")).isZero();
        }
    }

    @Test
    void aPeekWritesNothingAndIsOneEvalsha() throws Exception {
        Limit[] limits = {
            Limit.tokenBucket(5, Rate.perSecond(1)),
            Limit.gcra(Rate.perMinute(2), 3),
            Limit.fixedWindow(5, Duration.ofMinutes(1)),
            Limit.slidingWindow(5, Duration.ofMinutes(1)),
            Limit.slidingLog(5, Duration.ofMinutes(1))
        };
        String k = key("peek");
        String unknown = key("peek-unknown");
        try (RedisRateLimiter rl = serverClock()) {
            for (Limit l : limits) {
                assertThat(rl.tryAcquire(k, l, 2).allowed()).isTrue();
            }
            List<byte[]> before = new ArrayList<>();
            for (Limit l : limits) {
                before.add(snapshot(redisKey(k, l)));
            }
            long[] pttl = new long[limits.length];
            for (int i = 0; i < limits.length; i++) {
                pttl[i] = redis.pttl(redisKey(k, limits[i]));
                assertThat(pttl[i]).isPositive();
            }
            redis.configResetstat();
            int peeks = 0;
            for (int round = 0; round < 3; round++) {
                for (Limit l : limits) {
                    Decision d = rl.peek(k, l);
                    assertThat(d.allowed()).as("%s", l).isTrue();
                    assertThat(d.remaining()).as("%s", l).isEqualTo(l.capacity() - 2);
                    assertThat(rl.peek(k, l, l.capacity()).allowed())
                            .as("%s, all of it", l)
                            .isFalse();
                    assertThat(rl.peek(unknown, l, l.capacity()))
                            .as("%s, unknown key", l)
                            .isEqualTo(new Decision(true, l.capacity(), l.capacity(), 0, 0));
                    assertThat(rl.peekAsync(unknown, l, 1).get().remaining()).isEqualTo(l.capacity());
                    peeks += 4;
                }
            }
            String stats =
                    new String(redis.info("commandstats").getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
            assertThat(calls(stats, "evalsha")).as("one EVALSHA per peek").isEqualTo(peeks);
            assertThat(calls(stats, "eval")).isZero();
            // commands run by scripts count too: the reads are there, no write is
            assertThat(calls(stats, "get") + calls(stats, "zrangebyscore")).isPositive();
            for (String write : List.of(
                    "set",
                    "setex",
                    "psetex",
                    "del",
                    "unlink",
                    "expire",
                    "pexpire",
                    "pexpireat",
                    "zadd",
                    "zrem",
                    "zremrangebyscore",
                    "incrby")) {
                assertThat(calls(stats, write)).as("calls of %s", write).isZero();
            }
            for (int i = 0; i < limits.length; i++) {
                byte[] rk = redisKey(k, limits[i]);
                assertThat(snapshot(rk)).as("%s unchanged", limits[i]).isEqualTo(before.get(i));
                assertThat(redis.pttl(rk)).as("%s expiry not moved", limits[i]).isBetween(1L, pttl[i]);
                assertThat(redis.exists(redisKey(unknown, limits[i])))
                        .as("%s: no key created", limits[i])
                        .isZero();
            }
            // after SCRIPT FLUSH the EVAL fallback is read-only too
            redis.scriptFlush();
            assertThat(rl.peek(unknown, limits[0]).remaining()).isEqualTo(5);
            assertThat(redis.exists(redisKey(unknown, limits[0]))).isZero();
            // a key of another type fails as tryAcquire does, and stays as it was
            String wrong = key("peek-wrong");
            redis.lpush(redisKey(wrong, limits[4]), "x".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> rl.peek(wrong, limits[4]))
                    .isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("WRONGTYPE")
                    .hasMessageContaining("key '" + wrong + "'");
            assertThat(redis.llen(redisKey(wrong, limits[4]))).isEqualTo(1);
        }
    }

    /** The value of a key Sluice wrote: the string, or the sorted set's members with their scores. */
    private static byte[] snapshot(byte[] k) {
        if (redis.type(k).equals("zset")) {
            StringBuilder sb = new StringBuilder();
            redis.zrangeWithScores(k, 0, -1)
                    .forEach(v -> sb.append(new String(v.getValue(), StandardCharsets.UTF_8))
                            .append('@')
                            .append((long) v.getScore())
                            .append(';'));
            return sb.toString().getBytes(StandardCharsets.UTF_8);
        }
        return redis.get(k);
    }

    /** The calls of {@code command} that {@code INFO commandstats} counts (0 when none). */
    static long calls(String commandstats, String command) {
        for (String line : commandstats.split("\r?\n", -1)) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                int i = line.indexOf("calls=") + 6;
                return Long.parseLong(line.substring(i, line.indexOf(',', i)));
            }
        }
        return 0;
    }

    @Test
    void aKeyOfAnotherTypeIsAClearErrorNamingItAndNothingElseChanges() {
        ManualTicker t = Tck.ticker();
        Limit tb = Limit.tokenBucket(5, Rate.perSecond(1));
        Limit log = Limit.slidingLog(5, Duration.ofSeconds(1));
        String k = key("wrong type");
        String other = key("other");
        try (RedisRateLimiter rl = RedisServer.shared().limiter().ticker(t).build()) {
            redis.lpush(redisKey(k, tb), "x".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> rl.tryAcquire(k, tb))
                    .isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("WRONGTYPE")
                    .hasMessageContaining("key '" + k + "'")
                    .hasMessageContaining(new String(redisKey(k, tb), StandardCharsets.UTF_8));
            assertThat(redis.llen(redisKey(k, tb))).isEqualTo(1);
            // in a multi-permit the other key is untouched too
            assertThatThrownBy(() -> rl.tryAcquire(List.of(Permit.of(other, tb), Permit.of(k, tb))))
                    .isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("key '" + k + "'");
            assertThat(redis.exists(redisKey(other, tb))).isZero();
            assertThat(rl.tryAcquire(other, tb).remaining()).isEqualTo(4);

            redis.set(redisKey(k, log), "hello".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> rl.tryAcquire(k, log))
                    .isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("WRONGTYPE")
                    .hasMessageContaining("key '" + k + "'");
            Limit fw = Limit.fixedWindow(5, Duration.ofSeconds(1));
            redis.set(redisKey(k, fw), "not a window".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> rl.tryAcquireAsync(k, fw, 1).join())
                    .hasCauseInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("did not write")
                    .hasMessageContaining("key '" + k + "'");
        }
    }

    @Test
    void awkwardKeysAreDistinctAndUnencodableOnesAreRejected() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(1, Rate.perHour(1));
        String base = key("awk");
        String[] keys = {
            base + "\u0000nul",
            base + "\r\n*1\r\n$4\r\nPING",
            base + "{",
            base + "}",
            base + "{}",
            "{" + base + "}",
            "{" + base + "}x",
            base + "}{",
            base + "\uD83D\uDEA6",
            base + " ".repeat(100),
            base + "é".repeat(4096 - base.length())
        };
        try (RedisRateLimiter rl = RedisServer.shared().limiter().ticker(t).build()) {
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, l).allowed())
                        .as("first use of %s", k)
                        .isTrue();
            }
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, l).allowed())
                        .as("second use of %s", k)
                        .isFalse();
            }
            assertThatThrownBy(() -> rl.tryAcquire(base + "\uD83D", l))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unpaired UTF-16 surrogate");
        }
    }

    @Test
    void tryAcquireAsyncDoesNotBlockTheCaller() throws Exception {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(2, Rate.perSecond(1));
        String k = key("async");
        try (RedisRateLimiter rl = RedisServer.shared().limiter().ticker(t).build()) {
            rl.tryAcquire(k, l); // connected and scripts loaded
            redis.clientPause(1000); // Redis answers nobody for a second
            CompletableFuture<Decision> f = rl.tryAcquireAsync(k, l, 1);
            assertThat(f).as("returned before Redis answered").isNotDone();
            assertThat(f.get()).isEqualTo(new Decision(true, 2, 0, 0, 2_000_000_000L));
        }
    }

    @Test
    void badBuilderInputIsRejected() {
        assertThatThrownBy(() -> RedisRateLimiter.builder("localhost:6379").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis://");
        assertThatThrownBy(() -> RedisRateLimiter.builder("redis://x").keyPrefix("a{b}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("brace");
        assertThatThrownBy(() -> RedisRateLimiter.builder("redis://x").timeBudget(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT0S");
    }

    @Test
    void aClosedLimiterSaysSoAndClosingTwiceIsHarmless() {
        RedisRateLimiter rl =
                RedisServer.shared().limiter().ticker(Tck.ticker()).build();
        Limit l = Limit.tokenBucket(1, Rate.perSecond(1));
        assertThat(rl.tryAcquire(key("closed"), l).allowed()).isTrue();
        rl.close();
        rl.close();
        assertThatThrownBy(() -> rl.tryAcquire(key("closed"), l))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
    }

    @Test
    void keyPrefixSeparatesLimiters() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.fixedWindow(1, Duration.ofHours(1));
        String k = key("prefix");
        try (RedisRateLimiter a = RedisServer.shared()
                        .limiter()
                        .ticker(t)
                        .keyPrefix("app-a:")
                        .build();
                RedisRateLimiter b = RedisServer.shared()
                        .limiter()
                        .ticker(t)
                        .keyPrefix("app-b:")
                        .build()) {
            assertThat(a.tryAcquire(k, l).allowed()).isTrue();
            assertThat(b.tryAcquire(k, l).allowed()).isTrue();
            assertThat(a.tryAcquire(k, l).allowed()).isFalse();
            a.reset(k, l);
            assertThat(a.tryAcquire(k, l).allowed()).isTrue();
            assertThat(redis.exists(RedisKeys.of("app-a:", k, l))).isEqualTo(1);
        }
    }
}
