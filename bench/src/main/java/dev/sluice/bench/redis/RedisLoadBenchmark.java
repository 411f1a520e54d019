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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

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

    /** The callers' threads: each chain's next request is sent from here, as an application's would be. */
    private static final java.util.concurrent.ExecutorService CALLERS =
            java.util.concurrent.Executors.newFixedThreadPool(2, r -> {
                Thread t = new Thread(r, "caller");
                t.setDaemon(true);
                return t;
            });

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
            Client[] wideClients = {
                new Client("bare-evalsha (minimal GCRA)", i -> evalsha(bare, minimalSha, keys[i], interval, burst)),
                new Client(
                        "sluice", i -> sluice.tryAcquireAsync(skeys[i], wide, 1).thenApply(d -> d.allowed())),
                new Client(
                        "sluice batching(false)",
                        i -> single.tryAcquireAsync(skeys[i], wide, 1).thenApply(d -> d.allowed())),
                new Client(
                        "bucket4j-lettuce",
                        i -> bucket4j.builder()
                                .build(b4jKeys[i], () -> CompletableFuture.completedFuture(wideB4j))
                                .tryConsume(1))
            };
            // warm the JIT on every client before anything is measured
            for (int pass = 0; pass < 2; pass++) {
                for (Client c : wideClients) {
                    drive(admin, inFlight, Duration.ZERO, warmup, c.op(), keys.length);
                }
            }
            compare(
                    "100,000 keys, token bucket 100/s each",
                    admin,
                    inFlight,
                    warmup,
                    measure,
                    rounds,
                    keys.length,
                    wideClients);

            Limit hot = Limit.tokenBucket(1000, Rate.perSecond(1000));
            BucketConfiguration hotB4j = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(1000).refillGreedy(1000, Duration.ofSeconds(1)))
                    .build();
            byte[] hotKey = ("bench:" + run + ":hot").getBytes(StandardCharsets.UTF_8);
            byte[] hotKeyB4j = ("bench:" + run + ":hot-b4j").getBytes(StandardCharsets.UTF_8);
            byte[] hotInterval = "1000".getBytes(StandardCharsets.US_ASCII);
            byte[] hotBurst = "1000".getBytes(StandardCharsets.US_ASCII);
            compare(
                    "one hot key limited to 1000/s (burst 1000)",
                    admin,
                    inFlight,
                    warmup,
                    measure,
                    rounds,
                    1,
                    new Client(
                            "bare-evalsha (minimal GCRA)",
                            i -> evalsha(bare, minimalSha, hotKey, hotInterval, hotBurst)),
                    new Client(
                            "sluice",
                            i -> sluice.tryAcquireAsync("hot-" + run, hot, 1).thenApply(d -> d.allowed())),
                    new Client(
                            "sluice batching(false)",
                            i -> single.tryAcquireAsync("hot1-" + run, hot, 1).thenApply(d -> d.allowed())),
                    new Client(
                            "bucket4j-lettuce",
                            i -> bucket4j.builder()
                                    .build(hotKeyB4j, () -> CompletableFuture.completedFuture(hotB4j))
                                    .tryConsume(1)));

            Limit open = Limit.tokenBucket(1_000_000_000L, Rate.perSecond(1_000_000_000L));
            BucketConfiguration openB4j = BucketConfiguration.builder()
                    .addLimit(l -> l.capacity(1_000_000_000L).refillGreedy(1_000_000_000L, Duration.ofSeconds(1)))
                    .build();
            byte[] openKey = ("bench:" + run + ":open").getBytes(StandardCharsets.UTF_8);
            byte[] openKeyB4j = ("bench:" + run + ":open-b4j").getBytes(StandardCharsets.UTF_8);
            byte[] openInterval = "1".getBytes(StandardCharsets.US_ASCII);
            byte[] openBurst = "1000000000".getBytes(StandardCharsets.US_ASCII);
            compare(
                    "one hot key, every call admitted (10^9 per second)",
                    admin,
                    inFlight,
                    warmup,
                    measure,
                    rounds,
                    1,
                    new Client(
                            "bare-evalsha (minimal GCRA)",
                            i -> evalsha(bare, minimalSha, openKey, openInterval, openBurst)),
                    new Client(
                            "sluice",
                            i -> sluice.tryAcquireAsync("open-" + run, open, 1).thenApply(d -> d.allowed())),
                    new Client(
                            "sluice batching(false)",
                            i -> single.tryAcquireAsync("open1-" + run, open, 1).thenApply(d -> d.allowed())),
                    new Client(
                            "bucket4j-lettuce",
                            i -> bucket4j.builder()
                                    .build(openKeyB4j, () -> CompletableFuture.completedFuture(openB4j))
                                    .tryConsume(1)));

            if (System.getProperty("scenarios") == null) {
                ceiling(uri, admin, minimalSha, run, seconds, inFlight);
            }
        } finally {
            bareConn.close();
            b4jConn.close();
            admin.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /**
     * {@code redis-benchmark -c inFlight} running the same EVALSHAs (Sluice's gcra script with the ARGV
     * Sluice sends for a token bucket of 100 per second, and the minimal script): the ceiling of the script
     * on this Redis, with no client library in the way. Skipped when redis-benchmark is not on the PATH.
     */
    private static void ceiling(
            String uri,
            StatefulRedisConnection<String, String> admin,
            String minimalSha,
            String run,
            int seconds,
            int inFlight)
            throws Exception {
        io.lettuce.core.RedisURI u = io.lettuce.core.RedisURI.create(uri);
        // the text RedisRateLimiter loads for the token bucket: common.lua + gcra.lua + run.lua (LuaScripts)
        String sluiceScript = resource("common.lua") + "\n" + resource("gcra.lua") + "\n" + resource("run.lua");
        String sluiceSha = admin.sync().scriptLoad(sluiceScript);
        // tokenBucket(100, perSecond(100)): timeScale 1, interval 10^7 units, capacity 10^9 units, K = 1000
        List<String> sluiceArgs = List.of(
                "EVALSHA",
                sluiceSha,
                "1",
                "sluice:tb:100:1:10000000{bench:" + run + ":rb:__rand_int__}",
                "",
                "0",
                "g",
                "10000",
                "0",
                "1000000",
                "0",
                "1000");
        List<String> minimalArgs =
                List.of("EVALSHA", minimalSha, "1", "bench:" + run + ":rbm:__rand_int__", "10000", "100");
        int requests = Math.max(100_000, 30_000 * seconds);
        System.out.println("-- redis-benchmark -c " + inFlight + " -r 100000 -n " + requests
                + ", the same EVALSHA (no Java client)");
        for (var e : Map.of("sluice gcra.lua", sluiceArgs, "minimal GCRA", minimalArgs)
                .entrySet()) {
            List<String> cmd = new ArrayList<>(List.of(
                    "redis-benchmark",
                    "-h",
                    u.getHost(),
                    "-p",
                    Integer.toString(u.getPort()),
                    "-c",
                    Integer.toString(inFlight),
                    "-r",
                    "100000",
                    "-n",
                    Integer.toString(requests),
                    "-q"));
            cmd.addAll(e.getValue());
            Process p;
            try {
                p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            } catch (java.io.IOException notInstalled) {
                System.out.println("redis-benchmark is not on the PATH: skipped");
                return;
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            String rps = out.lines()
                    .filter(l -> l.contains("requests per second"))
                    .reduce((a, b) -> b)
                    .orElse(out.trim());
            int cr = rps.lastIndexOf('\r');
            System.out.printf(
                    Locale.ROOT,
                    "%-34s %s%n",
                    "redis-benchmark " + e.getKey(),
                    (cr >= 0 ? rps.substring(cr + 1) : rps).trim());
        }
    }

    private static String resource(String name) throws java.io.IOException {
        try (var in = RedisRateLimiter.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static CompletionStage<Boolean> evalsha(
            RedisAsyncCommands<byte[], byte[]> bare, String sha, byte[] key, byte[] interval, byte[] burst) {
        return bare.<Long>evalsha(sha, ScriptOutputType.INTEGER, new byte[][] {key}, interval, burst)
                .thenApply(r -> r == 1L);
    }

    /** One measured run of one client. */
    record Run(
            double perSecond,
            double allowedPercent,
            long errors,
            String commands,
            @Nullable Throwable firstError) {}

    /** A client under test: a name and how it decides for key number {@code i}. */
    record Client(String name, IntFunction<CompletionStage<Boolean>> op) {}

    /**
     * Runs every client {@code rounds} times, interleaved, and prints each one's best run: on a shared
     * machine other work only ever slows a run down, so the best of a few is the least disturbed. The
     * first client is the baseline of the ratio column.
     */
    static void compare(
            String title,
            StatefulRedisConnection<String, String> admin,
            int inFlight,
            Duration warmup,
            Duration measure,
            int rounds,
            int keys,
            Client... clients)
            throws Exception {
        System.out.println("-- " + title);
        // -Dclients=<regex>: only the clients whose name matches (the first, the ratio's baseline, always runs);
        // -Dscenarios=<regex>: only the scenarios whose title matches
        if (!title.matches(System.getProperty("scenarios", ".*"))) {
            return;
        }
        String only = System.getProperty("clients", ".*");
        List<Client> chosen = new ArrayList<>(List.of(clients[0]));
        for (int c = 1; c < clients.length; c++) {
            if (clients[c].name().matches(only)) {
                chosen.add(clients[c]);
            }
        }
        clients = chosen.toArray(new Client[0]);
        Run[] best = new Run[clients.length];
        for (int r = 0; r < rounds; r++) {
            for (int c = 0; c < clients.length; c++) {
                Run run = drive(admin, inFlight, warmup, measure, clients[c].op(), keys);
                if (best[c] == null || run.perSecond() > best[c].perSecond()) {
                    best[c] = run;
                }
            }
        }
        for (int c = 0; c < clients.length; c++) {
            Run run = best[c];
            System.out.printf(
                    Locale.ROOT,
                    "%-34s %12.0f %8.1f%% %9d %7.2f   %s%n",
                    clients[c].name(),
                    run.perSecond(),
                    run.allowedPercent(),
                    run.errors(),
                    run.perSecond() / best[0].perSecond(),
                    run.commands());
            if (run.firstError() != null) {
                System.out.println("    first error: " + run.firstError());
            }
        }
    }

    /** Runs {@code op} in {@code inFlight} closed-loop chains for {@code warmup + measure}; measures the second part. */
    static Run drive(
            StatefulRedisConnection<String, String> admin,
            int inFlight,
            Duration warmup,
            Duration measure,
            IntFunction<CompletionStage<Boolean>> op,
            int keys)
            throws Exception {
        LongAdder allowed = new LongAdder();
        LongAdder denied = new LongAdder();
        LongAdder errors = new LongAdder();
        java.util.concurrent.atomic.AtomicReference<Throwable> firstError =
                new java.util.concurrent.atomic.AtomicReference<>();
        AtomicBoolean counting = new AtomicBoolean(false);
        AtomicBoolean stop = new AtomicBoolean(false);
        CountDownLatch drained = new CountDownLatch(inFlight);
        for (int c = 0; c < inFlight; c++) {
            chain(op, keys, allowed, denied, errors, firstError, counting, stop, drained);
        }
        Thread.sleep(warmup.toMillis());
        Map<String, Long> before = commandStats(admin);
        double redisCpu0 = redisCpuSeconds(admin);
        long jvmCpu0 = jvmCpuNanos();
        counting.set(true);
        long t0 = System.nanoTime();
        Thread.sleep(measure.toMillis());
        counting.set(false);
        long t1 = System.nanoTime();
        long jvmCpu1 = jvmCpuNanos();
        double redisCpu1 = redisCpuSeconds(admin);
        Map<String, Long> after = commandStats(admin);
        stop.set(true);
        drained.await(30, TimeUnit.SECONDS);
        long n = allowed.sum() + denied.sum();
        StringBuilder cmds = new StringBuilder();
        List<Map.Entry<String, Long>> deltas = new ArrayList<>();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (d > 0 && !e.getKey().equals("info")) {
                deltas.add(Map.entry(e.getKey(), d));
            }
        }
        deltas.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        // CPU per decision: where the time goes (Redis's own, and this JVM's: the client and the callers)
        cmds.append(String.format(
                Locale.ROOT,
                "cpu/decision: redis %.1f us, jvm %.1f us;  ",
                (redisCpu1 - redisCpu0) * 1e6 / Math.max(1, n),
                (jvmCpu1 - jvmCpu0) / 1e3 / Math.max(1, n)));
        for (Map.Entry<String, Long> e : deltas) {
            cmds.append(String.format(Locale.ROOT, "%s %.2f  ", e.getKey(), e.getValue() / (double) Math.max(1, n)));
        }
        return new Run(
                n / ((t1 - t0) / 1e9),
                100.0 * allowed.sum() / Math.max(1, n),
                errors.sum(),
                cmds.toString().trim(),
                firstError.get());
    }

    private static void chain(
            IntFunction<CompletionStage<Boolean>> op,
            int keys,
            LongAdder allowed,
            LongAdder denied,
            LongAdder errors,
            java.util.concurrent.atomic.AtomicReference<Throwable> firstError,
            AtomicBoolean counting,
            AtomicBoolean stop,
            CountDownLatch drained) {
        if (stop.get()) {
            drained.countDown();
            return;
        }
        int k = keys == 1 ? 0 : ThreadLocalRandom.current().nextInt(keys);
        CompletionStage<Boolean> f;
        try {
            f = op.apply(k);
        } catch (RuntimeException e) {
            errors.increment();
            f = CompletableFuture.failedFuture(e);
        }
        // continue on the "application's" threads, as callers do, not on Lettuce's I/O thread
        f.whenCompleteAsync(
                (ok, e) -> {
                    if (counting.get()) {
                        if (e != null) {
                            errors.increment();
                            firstError.compareAndSet(null, e);
                        } else if (ok) {
                            allowed.increment();
                        } else {
                            denied.increment();
                        }
                    }
                    chain(op, keys, allowed, denied, errors, firstError, counting, stop, drained);
                },
                CALLERS);
    }

    /** calls per command from {@code INFO commandstats}. */
    /** Redis's CPU time so far (user + system, INFO cpu), in seconds. */
    static double redisCpuSeconds(StatefulRedisConnection<String, String> admin) {
        double t = 0;
        for (String line : admin.sync().info("cpu").split("\r?\n", -1)) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                t += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return t;
    }

    /** This JVM's CPU time so far, all threads. */
    static long jvmCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    static Map<String, Long> commandStats(StatefulRedisConnection<String, String> admin) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String line : admin.sync().info("commandstats").split("\r?\n", -1)) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring(8, line.indexOf(':'));
                int i = line.indexOf("calls=") + 6;
                out.put(name, Long.parseLong(line.substring(i, line.indexOf(',', i))));
            }
        }
        return out;
    }
}
