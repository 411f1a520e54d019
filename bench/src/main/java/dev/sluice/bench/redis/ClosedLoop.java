package dev.sluice.bench.redis;

import io.lettuce.core.api.StatefulRedisConnection;
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
 * The runner of {@link RedisLoadBenchmark}: clients driven in a closed loop ({@code inFlight} chains, each issuing its
 * next request when the previous one answers, from the callers' threads), a warm-up, then a measured run: decisions
 * per second, the share allowed, errors, and what each decision cost Redis (commands from {@code INFO commandstats},
 * Redis's CPU and this JVM's). {@link #compare} runs several clients interleaved and prints each one's best run.
 */
final class ClosedLoop {
    private ClosedLoop() {}

    /** The callers' threads: each chain's next request is sent from here, as an application's would be. */
    private static final java.util.concurrent.ExecutorService CALLERS =
            java.util.concurrent.Executors.newFixedThreadPool(2, r -> {
                Thread t = new Thread(r, "caller");
                t.setDaemon(true);
                return t;
            });

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
