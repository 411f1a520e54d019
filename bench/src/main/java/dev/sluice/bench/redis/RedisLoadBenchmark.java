package dev.sluice.bench.redis;

import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.redis.RedisRateLimiter;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Decisions per second against one Redis with a fixed number of requests in flight (a closed loop: each
 * of {@code inFlight} chains issues its next request when the previous one answers), side by side in one
 * run:
 * <ul>
 *   <li>{@code sluice} — {@link RedisRateLimiter#tryAcquireAsync}, token bucket, the defaults (batching on);</li>
 *   <li>{@code sluice batching(false)} — the same, one {@code EVALSHA} per decision;</li>
 *   <li>{@code bare-evalsha} — the floor: Lettuce async {@code EVALSHA} of a minimal GCRA script (no
 *       exactness, no fractions, no Decision), on one connection like Sluice;</li>
 *   <li>{@code bucket4j} — Bucket4j 8.14.0 {@code LettuceBasedProxyManager} (async), a read then a
 *       compare-and-swap script per attempt.</li>
 * </ul>
 * over 100,000 keys, on one hot key limited to 1000/s, and on one hot key where every call is admitted.
 * Also prints the Redis commands each decision cost (from {@code INFO commandstats}), errors and timeouts.
 *
 * <pre>
 *   java -cp "bench/target/classes:$(cat bench/target/cp.txt)" dev.sluice.bench.redis.RedisLoadBenchmark \
 *        redis://127.0.0.1:6379 [seconds per run, default 10] [in flight, default 50] [rounds, default 3]
 * </pre>
 * Not a test: run it by hand against a Redis you started (see bench/README.md).
 */
public final class RedisLoadBenchmark {

    /** The floor: the least a GCRA in Lua can do (TAT in microseconds, no fractions, no expiry subtleties). */
    static final String MINIMAL_GCRA = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            local interval = tonumber(ARGV[1])
            local burst = tonumber(ARGV[2])
            local tat = tonumber(redis.call('GET', KEYS[1]) or now)
            if tat < now then tat = now end
            local new = tat + interval
            if new - now > burst * interval then return 0 end
            redis.call('SET', KEYS[1], string.format('%.0f', new), 'PX', math.ceil((new - now) / 1000))
            return 1
            """;

    private RedisLoadBenchmark() {}

    public static void main(String[] args) throws Exception {
        String uri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int inFlight = args.length > 2 ? Integer.parseInt(args[2]) : 50;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        Duration warmup = Duration.ofSeconds(Math.max(1, seconds / 5));
        Duration measure = Duration.ofSeconds(seconds);

        RedisClient client = RedisClient.create(uri);
        StatefulRedisConnection<byte[], byte[]> bareConn = client.connect(ByteArrayCodec.INSTANCE);
        StatefulRedisConnection<byte[], byte[]> b4jConn = client.connect(ByteArrayCodec.INSTANCE);
        StatefulRedisConnection<String, String> admin = client.connect();
        RedisAsyncCommands<byte[], byte[]> bare = bareConn.async();
        String minimalSha = admin.sync().scriptLoad(MINIMAL_GCRA);
        AsyncProxyManager<byte[]> bucket4j = Bucket4jLettuce.casBasedBuilder(b4jConn)
                .expirationAfterWrite(
                        ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                .build()
                .asAsync();

        System.out.printf(
                Locale.ROOT,
                "Redis %s at %s; %d in flight; best of %d runs of %d s, each after %d s warm-up%n",
                admin.sync()
                        .info("server")
                        .lines()
                        .filter(l -> l.startsWith("redis_version:"))
                        .findFirst()
                        .orElse("?"),
                uri,
                inFlight,
                rounds,
                seconds,
                warmup.toSeconds());
        System.out.printf(
                Locale.ROOT,
                "%-34s %12s %9s %9s %7s   %s%n",
                "scenario",
                "decisions/s",
                "allowed%",
                "errors",
                "ratio",
                "Redis commands per decision");

        // the defaults (batching on, the default budget), and the same with one EVALSHA per decision
        try (RedisRateLimiter sluice =
                        RedisRateLimiter.builder(uri).cluster(false).build();
                RedisRateLimiter single = RedisRateLimiter.builder(uri)
                        .cluster(false)
                        .batching(false)
                        .build()) {
            // 100,000 keys: each key 100 per second, burst 100 (almost every call is admitted)
            Limit wide = Limit.tokenBucket(100, Rate.perSecond(100));
            BucketConfiguration wideB4j = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(100).refillGreedy(100, Duration.ofSeconds(1)))
                    .build();
            String run = Long.toString(System.nanoTime(), 36);
            // each client its own keys: their values have different formats
            byte[][] keys = new byte[100_000][];
            byte[][] b4jKeys = new byte[100_000][];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = ("bench:" + run + ":bare:" + i).getBytes(StandardCharsets.UTF_8);
                b4jKeys[i] = ("bench:" + run + ":b4j:" + i).getBytes(StandardCharsets.UTF_8);
            }
            String[] skeys = new String[keys.length];
            for (int i = 0; i < keys.length; i++) {
                skeys[i] = "bench:" + run + ":" + i;
            }
            byte[] interval = "10000".getBytes(StandardCharsets.US_ASCII); // 10 ms in µs
            byte[] burst = "100".getBytes(StandardCharsets.US_ASCII);
            ClosedLoop.Client[] wideClients = {
                new ClosedLoop.Client(
                        "bare-evalsha (minimal GCRA)", i -> evalsha(bare, minimalSha, keys[i], interval, burst)),
                new ClosedLoop.Client(
                        "sluice", i -> sluice.tryAcquireAsync(skeys[i], wide, 1).thenApply(d -> d.allowed())),
                new ClosedLoop.Client(
                        "sluice batching(false)",
                        i -> single.tryAcquireAsync(skeys[i], wide, 1).thenApply(d -> d.allowed())),
                new ClosedLoop.Client(
                        "bucket4j-lettuce",
                        i -> bucket4j.builder()
                                .build(b4jKeys[i], () -> CompletableFuture.completedFuture(wideB4j))
                                .tryConsume(1))
            };
            // warm the JIT on every client before anything is measured
            for (int pass = 0; pass < 2; pass++) {
                for (ClosedLoop.Client c : wideClients) {
                    ClosedLoop.drive(admin, inFlight, Duration.ZERO, warmup, c.op(), keys.length);
                }
            }
            ClosedLoop.compare(
                    "100,000 keys, token bucket 100/s each",
                    admin,
                    inFlight,
                    warmup,
                    measure,
                    rounds,
                    keys.length,
                    wideClients);

            Scenarios on = new Scenarios(
                    admin, inFlight, warmup, measure, rounds, bare, minimalSha, sluice, single, bucket4j, run);
            on.oneHotKey("one hot key limited to 1000/s (burst 1000)", "hot", 1000);
            on.oneHotKey("one hot key, every call admitted (10^9 per second)", "open", 1_000_000_000L);

            if (System.getProperty("scenarios") == null) {
                RedisBenchmarkCeiling.run(uri, admin, minimalSha, run, seconds, inFlight);
            }
        } finally {
            bareConn.close();
            b4jConn.close();
            admin.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static CompletionStage<Boolean> evalsha(
            RedisAsyncCommands<byte[], byte[]> bare, String sha, byte[] key, byte[] interval, byte[] burst) {
        return bare.<Long>evalsha(sha, ScriptOutputType.INTEGER, new byte[][] {key}, interval, burst)
                .thenApply(r -> r == 1L);
    }

    /** The clients of the one-hot-key scenarios, and how they are run. */
    private record Scenarios(
            StatefulRedisConnection<String, String> admin,
            int inFlight,
            Duration warmup,
            Duration measure,
            int rounds,
            RedisAsyncCommands<byte[], byte[]> bare,
            String minimalSha,
            RedisRateLimiter sluice,
            RedisRateLimiter single,
            AsyncProxyManager<byte[]> bucket4j,
            String run) {

        /** One hot key, {@code name}, limited to {@code perSecond} (burst as many): the four clients compared. */
        void oneHotKey(String title, String name, long perSecond) throws Exception {
            Limit limit = Limit.tokenBucket(perSecond, Rate.perSecond(perSecond));
            BucketConfiguration b4j = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(perSecond).refillGreedy(perSecond, Duration.ofSeconds(1)))
                    .build();
            byte[] key = ("bench:" + run + ":" + name).getBytes(StandardCharsets.UTF_8);
            byte[] keyB4j = ("bench:" + run + ":" + name + "-b4j").getBytes(StandardCharsets.UTF_8);
            // the minimal script's emission interval in µs (at least 1) and burst
            byte[] interval = Long.toString(Math.max(1, 1_000_000 / perSecond)).getBytes(StandardCharsets.US_ASCII);
            byte[] burst = Long.toString(perSecond).getBytes(StandardCharsets.US_ASCII);
            ClosedLoop.compare(
                    title,
                    admin,
                    inFlight,
                    warmup,
                    measure,
                    rounds,
                    1,
                    new ClosedLoop.Client(
                            "bare-evalsha (minimal GCRA)", i -> evalsha(bare, minimalSha, key, interval, burst)),
                    new ClosedLoop.Client(
                            "sluice",
                            i -> sluice.tryAcquireAsync(name + "-" + run, limit, 1)
                                    .thenApply(d -> d.allowed())),
                    new ClosedLoop.Client(
                            "sluice batching(false)",
                            i -> single.tryAcquireAsync(name + "1-" + run, limit, 1)
                                    .thenApply(d -> d.allowed())),
                    new ClosedLoop.Client(
                            "bucket4j-lettuce",
                            i -> bucket4j.builder()
                                    .build(keyB4j, () -> CompletableFuture.completedFuture(b4j))
                                    .tryConsume(1)));
        }
    }
}
