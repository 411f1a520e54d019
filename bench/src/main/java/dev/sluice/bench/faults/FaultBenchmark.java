package dev.sluice.bench.faults;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.bench.Latencies;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.postgres.PostgresRateLimiter;
import dev.sluice.postgres.RetryPolicy;
import dev.sluice.redis.RedisRateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * A real store failing under load, measured: {@code threads} callers decide through a {@link FailSafeRateLimiter}
 * (fail open, the store's default budget) while this runs {@code fault} (a shell command: kill or pause the store),
 * waits {@code outage}, runs {@code repair} (restart or resume it) and polls until the store decides a fresh key
 * exactly again. It prints, per phase (healthy, fault, after), the latency of every call (p50, p99, p99.9, max)
 * next to the budget, the degraded and failed calls, and how long after {@code repair} returned the decisions were
 * exact again. These are the figures the tests do not assert (they run on busy machines); bench/README.md records
 * them with the commands.
 *
 * <pre>
 * java -cp "bench/target/classes:$(cat bench/target/cp.txt)" dev.sluice.bench.faults.FaultBenchmark \
 *      redis://127.0.0.1:6390 "kill -9 \$(cat /tmp/r.pid)" "redis-server --port 6390 --daemonize yes --pidfile /tmp/r.pid" 2000 8
 * </pre>
 */
public final class FaultBenchmark {

    private static final Limit LOAD = Limit.tokenBucket(1_000_000_000L, Rate.perSecond(1_000_000));

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println(
                    "usage: FaultBenchmark <redis://… | jdbc:postgresql://…> <fault command> <repair command>"
                            + " [outage ms, default 2000] [threads, default 8] [rounds, default 3]");
            System.exit(2);
        }
        String uri = args[0];
        String fault = args[1];
        String repair = args[2];
        long outageMillis = args.length > 3 ? Long.parseLong(args[3]) : 2000;
        int threads = args.length > 4 ? Integer.parseInt(args[4]) : 8;
        int rounds = args.length > 5 ? Integer.parseInt(args[5]) : 3;
        boolean redis = uri.startsWith("redis");
        Duration budget = redis ? RedisRateLimiter.DEFAULT_TIME_BUDGET : RetryPolicy.DEFAULT.budget();
        Supplier<RateLimiter> open = redis ? () -> RedisRateLimiter.create(uri) : () -> PostgresRateLimiter.create(uri);
        try (FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(open)
                .policy(FailurePolicy.FAIL_OPEN)
                .build()) {
            System.out.printf(
                    "%s, budget %d ms, %d threads, outage %d ms, %d rounds%n  fault:  %s%n  repair: %s%n",
                    redis ? "Redis" : "PostgreSQL", budget.toMillis(), threads, outageMillis, rounds, fault, repair);
            for (int round = 1; round <= rounds; round++) {
                round(limiter, threads, fault, repair, outageMillis, round);
            }
        }
    }

    private static void round(
            FailSafeRateLimiter limiter, int threads, String fault, String repair, long outageMillis, int round)
            throws Exception {
        Map<String, Phase> byPhase = new LinkedHashMap<>();
        for (String p : List.of("healthy", "fault", "after")) {
            byPhase.put(p, new Phase(new Latencies(), new AtomicLong(), new AtomicLong()));
        }
        AtomicReference<String> phase = new AtomicReference<>("healthy");
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            String key = "fault-bench:" + round + ":" + t;
            Thread w = new Thread(
                    () -> {
                        while (!stop.get()) {
                            Phase p = Objects.requireNonNull(byPhase.get(phase.get()), "one of the three");
                            long s = System.nanoTime();
                            try {
                                Decision d = limiter.tryAcquire(key, LOAD);
                                if (d.degraded()) {
                                    p.degraded().incrementAndGet();
                                }
                            } catch (RuntimeException e) {
                                p.errors().incrementAndGet();
                            }
                            long n = System.nanoTime() - s;
                            Latencies l = p.latencies();
                            synchronized (l) {
                                l.record(n);
                            }
                            try {
                                Thread.sleep(1);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    },
                    "fault-bench-" + t);
            w.start();
            workers.add(w);
        }
        Thread.sleep(2000);
        phase.set("fault");
        sh(fault);
        Thread.sleep(outageMillis);
        sh(repair);
        long repaired = System.nanoTime();
        long exactAfter = awaitExact(limiter, repaired);
        phase.set("after");
        Thread.sleep(2000);
        stop.set(true);
        for (Thread w : workers) {
            w.join();
        }
        System.out.printf(
                "round %d: exact again %s after the repair command returned%n",
                round, exactAfter < 0 ? "NOT within 60 s" : Latencies.ms(exactAfter));
        for (Map.Entry<String, Phase> p : byPhase.entrySet()) {
            System.out.printf(
                    "  %-8s %s; degraded %d, errors %d%n",
                    p.getKey(),
                    p.getValue().latencies().summary(),
                    p.getValue().degraded().get(),
                    p.getValue().errors().get());
        }
    }

    /** What one phase of a round saw: each call's latency, and how many were degraded or failed. */
    private record Phase(Latencies latencies, AtomicLong degraded, AtomicLong errors) {}

    /** Nanoseconds from {@code since} until a fresh key limited to 5 admits exactly 5 of 7, none degraded; -1 after 60 s. */
    private static long awaitExact(RateLimiter limiter, long since) throws InterruptedException {
        Limit five = Limit.tokenBucket(5, Rate.perHour(1));
        for (int round = 0; System.nanoTime() - since < 60_000_000_000L; round++) {
            String key = "fault-bench-exact:" + since + ":" + round;
            int allowed = 0;
            boolean exact = true;
            for (int i = 0; i < 7 && exact; i++) {
                Decision d = limiter.tryAcquire(key, five);
                exact = !d.degraded();
                allowed += d.allowed() ? 1 : 0;
            }
            if (exact && allowed == 5) {
                return System.nanoTime() - since;
            }
            Thread.sleep(5);
        }
        return -1;
    }

    private static void sh(String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command).inheritIO().start();
        if (p.waitFor() != 0) {
            System.out.println("  (command exited " + p.exitValue() + ": " + command + ")");
        }
    }

    private FaultBenchmark() {}
}
