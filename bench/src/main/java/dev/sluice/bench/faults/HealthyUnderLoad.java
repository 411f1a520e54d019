package dev.sluice.bench.faults;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.bench.Latencies;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.postgres.PostgresRateLimiter;
import dev.sluice.redis.RedisRateLimiter;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A healthy store under load, with the store's default settings behind a default {@link FailSafeRateLimiter}: how
 * long synchronous decisions take (p50 … p99.9, max) and how many failed or were degraded, which on a healthy store
 * must be zero. This is what the default time budgets are sized from: a default sits far above the p99.9 measured
 * here on a busy machine.
 *
 * <p>{@code threads} callers each make {@code calls} decisions, on one hot key or on a key each ({@code hot} or
 * {@code spread}); with {@code monitor} a Redis {@code MONITOR} client is attached for the whole run (every command
 * is echoed to it, which slows Redis down).
 *
 * <pre>
 * java -cp "bench/target/classes:$(cat bench/target/cp.txt)" dev.sluice.bench.faults.HealthyUnderLoad \
 *      redis://127.0.0.1:6390 8 2000 hot monitor
 * java -cp … dev.sluice.bench.faults.HealthyUnderLoad jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres 64 500 spread
 * </pre>
 */
public final class HealthyUnderLoad {

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: HealthyUnderLoad <redis://… | jdbc:postgresql://…> <threads> <calls per thread>"
                    + " <hot|spread> [monitor]");
            System.exit(2);
        }
        String uri = args[0];
        int threads = Integer.parseInt(args[1]);
        int calls = Integer.parseInt(args[2]);
        boolean hot = args[3].equals("hot");
        boolean monitor = args.length > 4 && args[4].equals("monitor");
        Supplier<RateLimiter> open =
                uri.startsWith("redis") ? () -> RedisRateLimiter.create(uri) : () -> PostgresRateLimiter.create(uri);
        Socket mon = monitor ? monitor(uri) : null; // open for the whole run
        try {
            run(open, uri, threads, calls, hot, monitor);
        } finally {
            if (mon != null) {
                mon.close();
            }
        }
    }

    private static void run(
            Supplier<RateLimiter> open, String uri, int threads, int calls, boolean hot, boolean monitor)
            throws InterruptedException {
        Limit limit = Limit.tokenBucket(1_000_000, Rate.perSecond(1_000_000));
        Latencies latencies = new Latencies();
        AtomicLong errors = new AtomicLong();
        AtomicLong degraded = new AtomicLong();
        long t0 = System.nanoTime();
        try (FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(open).build()) {
            long opened = System.nanoTime() - t0;
            Decision first = limiter.tryAcquire("first-" + System.nanoTime(), limit);
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            long[][] samples = new long[threads][calls];
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread w = new Thread(() -> {
                    String key = hot ? "hot" : "key-" + me;
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < calls; i++) {
                        long s = System.nanoTime();
                        try {
                            if (limiter.tryAcquire(key, limit).degraded()) {
                                degraded.incrementAndGet();
                            }
                        } catch (RuntimeException e) {
                            errors.incrementAndGet();
                        }
                        samples[me][i] = System.nanoTime() - s;
                    }
                });
                w.start();
                workers.add(w);
            }
            long start = System.nanoTime();
            go.countDown();
            for (Thread w : workers) {
                w.join();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            for (long[] perThread : samples) {
                for (long n : perThread) {
                    latencies.record(n);
                }
            }
            System.out.printf(
                    "store %s threads %d calls %d %s%s: create %s, first decision degraded=%s%n",
                    URI.create(uri.replaceFirst("^jdbc:", "")).getScheme(),
                    threads,
                    calls,
                    hot ? "hot key" : "a key each",
                    monitor ? " +MONITOR" : "",
                    Latencies.ms(opened),
                    first.degraded());
            System.out.printf(
                    "  %d decisions in %.1f s (%.0f/s); errors %d, degraded %d%n",
                    latencies.count(), seconds, latencies.count() / seconds, errors.get(), degraded.get());
            System.out.println("  latency " + latencies.summary());
        }
    }

    /** A raw {@code MONITOR} client: Redis echoes every command to it; a thread drains the echo. */
    private static Socket monitor(String uri) throws Exception {
        URI u = URI.create(uri);
        Socket s = new Socket(u.getHost(), u.getPort());
        OutputStream out = s.getOutputStream();
        out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        Thread drain = new Thread(
                () -> {
                    byte[] buf = new byte[64 * 1024];
                    try {
                        while (s.getInputStream().read(buf) >= 0) {
                            // discard
                        }
                    } catch (Exception e) {
                        // closed
                    }
                },
                "monitor-drain");
        drain.setDaemon(true);
        drain.start();
        Thread.sleep(100);
        return s;
    }

    private HealthyUnderLoad() {}
}
