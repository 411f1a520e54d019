package dev.sluice.bench.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.redis.RedisRateLimiter;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Several JVM processes (a fleet of nodes) deciding one hot key on one shared Redis, with exact local leases
 * ({@link LeasedRateLimiter} over {@link RedisRateLimiter}, its defaults) and without (the Redis store alone, batching
 * on), side by side in one run. Every node runs {@code threads} threads calling {@code tryAcquire} as fast as they can
 * for the same few seconds; the parent starts them together and adds up:
 * <ul>
 *   <li>aggregate decisions per second over the fleet;</li>
 *   <li>store calls per decision (the nodes' own count; {@code EVALSHA}s from {@code INFO commandstats} beside it);</li>
 *   <li>admitted against the ideal: what one shared limiter would admit when asked every call, which on a key asked far
 *       above its rate is {@code burst + rate × (last decision − first decision)} (all nodes read one monotonic clock:
 *       {@code System.nanoTime} is the machine's {@code CLOCK_MONOTONIC}). More than the ideal is over-admission;
 *       less is the leases' under-admission (permits taken and not spent before their place in the schedule came).</li>
 * </ul>
 * Two keys: one asked far above its limit (50,000/s, burst 5,000) and one asked about as fast as its limit (1M/s,
 * burst 100,000).
 *
 * <pre>
 *   java -cp bench/target/benchmarks.jar dev.sluice.bench.redis.FleetLeaseBenchmark redis://127.0.0.1:6379 \
 *        [nodes, default 3] [threads per node, default 16] [seconds, default 5]
 * </pre>
 * Not a test: run it by hand against a Redis you started (see bench/README.md).
 */
public final class FleetLeaseBenchmark {
    private FleetLeaseBenchmark() {}

    /** A scenario: the rate and burst of its key's token bucket, which also give the ideal (0 rate: all admitted). */
    private record Scenario(String name, long ratePerSecond, long burst) {}

    /** One node's figures: decisions, admitted, its store calls, and when its first and last decisions were. */
    private record NodeResult(long decisions, long admitted, long storeCalls, long firstNanos, long lastNanos) {
        static NodeResult parse(String line) {
            String[] f = line.trim().split(" ", -1);
            return new NodeResult(
                    Long.parseLong(f[1]),
                    Long.parseLong(f[2]),
                    Long.parseLong(f[3]),
                    Long.parseLong(f[4]),
                    Long.parseLong(f[5]));
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("node")) {
            node(args);
            return;
        }
        String uri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
        int nodes = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 16;
        int seconds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
        Scenario[] scenarios = {
            new Scenario("hot key over its limit (50,000/s, burst 5,000)", 50_000, 5_000),
            new Scenario("hot key near its limit (1M/s, burst 100,000)", 1_000_000, 100_000)
        };
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> admin = client.connect()) {
            System.out.printf(
                    Locale.ROOT,
                    "%d JVMs x %d threads, one hot key, %d s each, Redis at %s (%s)%n",
                    nodes,
                    threads,
                    seconds,
                    uri,
                    admin.sync()
                            .info("server")
                            .lines()
                            .filter(l -> l.startsWith("redis_version:"))
                            .findFirst()
                            .orElse("?"));
            System.out.printf(
                    Locale.ROOT,
                    "%-48s %-8s %13s %12s %12s %14s %12s %12s%n",
                    "scenario",
                    "leases",
                    "decisions/s",
                    "ratio",
                    "calls/dec",
                    "EVALSHA/dec",
                    "admitted",
                    "ideal");
            for (Scenario s : scenarios) {
                double plain = 0;
                for (boolean leases : new boolean[] {false, true}) {
                    long evalshaBefore = ClosedLoop.commandStats(admin).getOrDefault("evalsha", 0L);
                    List<NodeResult> results = fleet(uri, nodes, threads, seconds, s, leases);
                    long evalshas = ClosedLoop.commandStats(admin).getOrDefault("evalsha", 0L) - evalshaBefore;
                    long decisions =
                            results.stream().mapToLong(NodeResult::decisions).sum();
                    long admitted =
                            results.stream().mapToLong(NodeResult::admitted).sum();
                    long calls =
                            results.stream().mapToLong(NodeResult::storeCalls).sum();
                    long first = results.stream()
                            .mapToLong(NodeResult::firstNanos)
                            .min()
                            .orElseThrow();
                    long last = results.stream()
                            .mapToLong(NodeResult::lastNanos)
                            .max()
                            .orElseThrow();
                    double perSecond = decisions * 1e9 / (last - first);
                    long ideal = Math.min(
                            decisions, s.burst() + (long) Math.ceil(s.ratePerSecond() * ((last - first) / 1e9)));
                    if (!leases) {
                        plain = perSecond;
                    }
                    System.out.printf(
                            Locale.ROOT,
                            "%-48s %-8s %,13.0f %11.1fx %12.5f %14.5f %,12d %,12d%s%n",
                            s.name(),
                            leases ? "on" : "off",
                            perSecond,
                            perSecond / plain,
                            (double) calls / decisions,
                            (double) evalshas / decisions,
                            admitted,
                            ideal,
                            admitted > ideal
                                    ? "  OVER-ADMITTED " + (admitted - ideal)
                                    : String.format(
                                            Locale.ROOT,
                                            "  under by %,d (%.3f%%)",
                                            ideal - admitted,
                                            100.0 * (ideal - admitted) / ideal));
                }
            }
        } finally {
            client.shutdown();
        }
    }

    /** Starts the nodes, lets them warm up, starts their measured run together and collects their figures. */
    private static List<NodeResult> fleet(String uri, int nodes, int threads, int seconds, Scenario s, boolean leases)
            throws Exception {
        String key = "fleet:" + Long.toString(System.nanoTime(), 36);
        List<Process> ps = new ArrayList<>();
        try {
            for (int i = 0; i < nodes; i++) {
                ps.add(new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java")
                                        .toString(),
                                "-Xmx256m",
                                "-cp",
                                System.getProperty("java.class.path"),
                                FleetLeaseBenchmark.class.getName(),
                                "node",
                                uri,
                                Boolean.toString(leases),
                                Integer.toString(threads),
                                Integer.toString(seconds),
                                Long.toString(s.ratePerSecond()),
                                Long.toString(s.burst()),
                                key)
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start());
            }
            List<BufferedReader> outs = new ArrayList<>();
            for (Process p : ps) {
                BufferedReader r =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                String line = r.readLine();
                if (!"ready".equals(line)) {
                    throw new IllegalStateException("a node did not start: " + line);
                }
                outs.add(r);
            }
            for (Process p : ps) {
                Writer w = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
                w.write("go\n");
                w.flush();
            }
            List<NodeResult> results = new ArrayList<>();
            for (BufferedReader r : outs) {
                results.add(NodeResult.parse(r.readLine()));
            }
            return results;
        } finally {
            for (Process p : ps) {
                p.destroy();
                p.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** A node: warms up on another key, says ready, waits for go, runs, prints its figures. */
    private static void node(String[] args) throws Exception {
        String uri = args[1];
        boolean leases = Boolean.parseBoolean(args[2]);
        int threads = Integer.parseInt(args[3]);
        long nanos = TimeUnit.SECONDS.toNanos(Integer.parseInt(args[4]));
        Limit limit = Limit.tokenBucket(Long.parseLong(args[6]), Rate.perSecond(Long.parseLong(args[5])));
        String key = args[7];
        RedisRateLimiter redis = RedisRateLimiter.builder(uri).cluster(false).build();
        LeasedRateLimiter leased = leases ? LeasedRateLimiter.over(redis) : null;
        RateLimiter limiter = leased != null ? leased : redis;
        run(limiter, key + ":warmup:" + ProcessHandle.current().pid(), limit, threads, TimeUnit.SECONDS.toNanos(2));
        long callsBefore = leased != null ? leased.storeCalls() : 0;
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (!"go".equals(in.readLine())) {
            return;
        }
        long[] r = run(limiter, key, limit, threads, nanos);
        long calls = leased != null ? leased.storeCalls() - callsBefore : r[0];
        System.out.println("result " + r[0] + " " + r[1] + " " + calls + " " + r[2] + " " + r[3]);
        System.out.flush();
        limiter.close();
    }

    /** {@code threads} threads deciding {@code key} for {@code nanos}: decisions, admitted, first and last instants. */
    private static long[] run(RateLimiter limiter, String key, Limit limit, int threads, long nanos) throws Exception {
        LongAdder decisions = new LongAdder();
        LongAdder admitted = new LongAdder();
        long start = System.nanoTime();
        long[] last = new long[threads];
        AtomicBoolean failed = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(
                    () -> {
                        try {
                            long n = 0;
                            long a = 0;
                            long now;
                            do {
                                Decision d = limiter.tryAcquire(key, limit, 1);
                                n++;
                                if (d.allowed()) {
                                    a++;
                                }
                                now = System.nanoTime();
                            } while (now - start < nanos);
                            last[id] = now;
                            decisions.add(n);
                            admitted.add(a);
                        } catch (RuntimeException e) {
                            failed.set(true);
                            e.printStackTrace();
                        } finally {
                            done.countDown();
                        }
                    },
                    "node-" + t);
            th.start();
        }
        done.await();
        if (failed.get()) {
            throw new IllegalStateException("a decision failed");
        }
        long end = 0;
        for (long l : last) {
            end = Math.max(end, l);
        }
        return new long[] {decisions.sum(), admitted.sum(), start, end};
    }
}
