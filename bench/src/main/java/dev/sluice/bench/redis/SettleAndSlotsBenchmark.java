package dev.sluice.bench.redis;

import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.redis.RedisRateLimiter;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Issue 30 on one Redis, side by side in one run ({@link ClosedLoop}: a fixed number of requests in flight, each
 * chain sending its next operation when the previous one answers):
 *
 * <ul>
 *   <li><b>a cost known afterwards</b>: take an estimate of 8, then settle at an actual of 5 (3 given back).
 *       {@code sluice} is {@code tryAcquireEstimateAsync} then {@code settleAsync}; {@code bucket4j-lettuce} is
 *       Bucket4j 8.14.0's nearest equivalent, {@code tryConsume(8)} then {@code addTokens(3)} on its
 *       {@code LettuceBasedProxyManager} (no pending record, so neither idempotent nor expiring). One operation is
 *       the pair; over 10,000 keys, token bucket 1000/s each.</li>
 *   <li><b>work in flight</b>: take a slot with a 30 s lease, then release it. {@code sluice} is
 *       {@code inFlight().tryAcquireAsync} then {@code releaseAsync}; {@code redisson} is Redisson 3.52.0's
 *       {@code RPermitExpirableSemaphore} ({@code tryAcquireAsync(0, 30 s)} then {@code releaseAsync(permitId)}),
 *       4 permits per key set once before the run. One operation is the pair; over 1,000 keys, at most 4 in flight
 *       each.</li>
 * </ul>
 * Each row says what one operation cost Redis: commands ({@code INFO commandstats}, so the round trips a client
 * sends) and Redis's CPU.
 *
 * <pre>
 *   java -cp "bench/target/classes:$(cat bench/target/cp.txt)" dev.sluice.bench.redis.SettleAndSlotsBenchmark \
 *        redis://127.0.0.1:6390 [seconds per run, default 5] [in flight, default 50] [rounds, default 3]
 * </pre>
 */
public final class SettleAndSlotsBenchmark {
    private SettleAndSlotsBenchmark() {}

    public static void main(String[] args) throws Exception {
        String uri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int inFlight = args.length > 2 ? Integer.parseInt(args[2]) : 50;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        Duration warmup = Duration.ofSeconds(Math.max(1, seconds / 5));
        Duration measure = Duration.ofSeconds(seconds);
        String run = Long.toString(System.nanoTime(), 36);

        RedisClient client = RedisClient.create(uri);
        StatefulRedisConnection<byte[], byte[]> b4jConn = client.connect(ByteArrayCodec.INSTANCE);
        StatefulRedisConnection<String, String> admin = client.connect();
        Config config = new Config();
        config.useSingleServer().setAddress(uri);
        RedissonClient redisson = Redisson.create(config);
        AsyncProxyManager<byte[]> bucket4j = Bucket4jLettuce.casBasedBuilder(b4jConn)
                .expirationAfterWrite(
                        ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                .build()
                .asAsync();
        System.out.printf(
                Locale.ROOT,
                "Redis at %s; %d in flight; best of %d runs of %d s, each after %d s warm-up%n",
                uri,
                inFlight,
                rounds,
                seconds,
                warmup.toSeconds());
        System.out.printf(
                Locale.ROOT,
                "%-34s %12s %9s %9s %7s   %s%n",
                "client",
                "operations/s",
                "allowed%",
                "errors",
                "ratio",
                "Redis per operation");
        try (RedisRateLimiter sluice =
                RedisRateLimiter.builder(uri).cluster(false).build()) {
            settle(sluice, bucket4j, admin, run, inFlight, warmup, measure, rounds);
            slots(sluice.inFlight(), redisson, admin, run, inFlight, warmup, measure, rounds);
        } finally {
            redisson.shutdown();
            b4jConn.close();
            admin.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static void settle(
            RedisRateLimiter sluice,
            AsyncProxyManager<byte[]> bucket4j,
            StatefulRedisConnection<String, String> admin,
            String run,
            int inFlight,
            Duration warmup,
            Duration measure,
            int rounds)
            throws Exception {
        int keys = 10_000;
        Limit limit = Limit.tokenBucket(1000, Rate.perSecond(1000));
        BucketConfiguration b4jConfig = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(1000).refillGreedy(1000, Duration.ofSeconds(1)))
                .build();
        String[] sluiceKeys = new String[keys];
        AsyncBucketProxy[] buckets = new AsyncBucketProxy[keys];
        for (int i = 0; i < keys; i++) {
            sluiceKeys[i] = "bench:" + run + ":settle:" + i;
            buckets[i] = bucket4j.builder()
                    .build(
                            ("bench:" + run + ":b4j-settle:" + i).getBytes(StandardCharsets.UTF_8),
                            () -> CompletableFuture.completedFuture(b4jConfig));
        }
        AtomicLong ids = new AtomicLong();
        ClosedLoop.Client[] clients = {
            new ClosedLoop.Client(
                    "bucket4j-lettuce tryConsume+addTokens",
                    i -> buckets[i]
                            .tryConsume(8)
                            .thenCompose(ok -> ok
                                    ? buckets[i].addTokens(3).thenApply(v -> true)
                                    : CompletableFuture.completedFuture(false))),
            new ClosedLoop.Client("sluice estimate+settle", i -> {
                String id = "r" + ids.incrementAndGet();
                return sluice.tryAcquireEstimateAsync(sluiceKeys[i], limit, 8, id, Duration.ofMinutes(1))
                        .thenCompose(d -> d.allowed()
                                ? sluice.settleAsync(sluiceKeys[i], limit, id, 5)
                                        .thenApply(s -> s.settled())
                                : CompletableFuture.completedFuture(false));
            })
        };
        warm(admin, inFlight, warmup, keys, clients);
        ClosedLoop.compare(
                "a cost known afterwards: estimate 8, actual 5; 10,000 keys, token bucket 1000/s",
                admin,
                inFlight,
                warmup,
                measure,
                rounds,
                keys,
                clients);
    }

    private static void slots(
            InFlightLimiter sluice,
            RedissonClient redisson,
            StatefulRedisConnection<String, String> admin,
            String run,
            int inFlight,
            Duration warmup,
            Duration measure,
            int rounds)
            throws Exception {
        int keys = 1_000;
        long max = 4;
        Duration lease = Duration.ofSeconds(30);
        String[] sluiceKeys = new String[keys];
        RPermitExpirableSemaphore[] semaphores = new RPermitExpirableSemaphore[keys];
        for (int i = 0; i < keys; i++) {
            sluiceKeys[i] = "bench:" + run + ":slots:" + i;
            semaphores[i] = redisson.getPermitExpirableSemaphore("bench:" + run + ":redisson-slots:" + i);
            semaphores[i].trySetPermits((int) max);
        }
        AtomicLong holders = new AtomicLong();
        ClosedLoop.Client[] clients = {
            new ClosedLoop.Client(
                    "redisson RPermitExpirableSemaphore",
                    i -> semaphores[i]
                            .tryAcquireAsync(0, lease.toMillis(), TimeUnit.MILLISECONDS)
                            .toCompletableFuture()
                            .thenCompose(permit -> permit == null
                                    ? CompletableFuture.completedFuture(false)
                                    : semaphores[i]
                                            .releaseAsync(permit)
                                            .toCompletableFuture()
                                            .thenApply(v -> true))),
            new ClosedLoop.Client("sluice inFlight acquire+release", i -> {
                String holder = "h" + holders.incrementAndGet();
                return sluice.tryAcquireAsync(sluiceKeys[i], max, holder, lease)
                        .thenCompose(d -> d.allowed()
                                ? sluice.releaseAsync(sluiceKeys[i], holder)
                                : CompletableFuture.completedFuture(false));
            })
        };
        warm(admin, inFlight, warmup, keys, clients);
        ClosedLoop.compare(
                "work in flight: acquire then release, 30 s lease; 1,000 keys, at most 4 each",
                admin,
                inFlight,
                warmup,
                measure,
                rounds,
                keys,
                clients);
    }

    /** Warms the JIT on every client before anything is measured. */
    private static void warm(
            StatefulRedisConnection<String, String> admin,
            int inFlight,
            Duration warmup,
            int keys,
            ClosedLoop.Client... clients)
            throws Exception {
        for (int pass = 0; pass < 2; pass++) {
            for (ClosedLoop.Client c : clients) {
                ClosedLoop.drive(admin, inFlight, Duration.ZERO, warmup, c.op(), keys);
            }
        }
    }
}
