package dev.sluice.bench;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.memory.InMemoryRateLimiter;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Retained heap per tracked key (not a JMH benchmark): fills a limiter with {@code keys} distinct keys, one
 * call each, and reports the heap still in use after a full GC, minus the heap in use before, divided by
 * the number of keys (and, as a check, the heap released when the limiter is dropped). One unmeasured
 * fill comes first, so class loading and compilation fall outside the measured ones. Keys are built per
 * call ({@code "user:" + i}) and dropped by the caller, as request keys are, so whatever the limiter keeps
 * of them is counted.
 *
 * <p>The limit is a bucket of 10 refilled at 10 per hour: one call leaves a key 6 minutes from full, so no
 * key returns to a fresh state (which a limiter may drop) while it is measured. After measuring, a sample
 * of keys is called again to check that their state was kept (a limiter that forgot keys would look
 * small).
 *
 * <pre>
 * java -Xms2g -Xmx2g -XX:+UseSerialGC -cp bench/target/benchmarks.jar dev.sluice.bench.RetainedHeap [sluice|bucket4j|all] [keys] [repeats]
 * </pre>
 */
public final class RetainedHeap {
    private static final String PREFIX = "user:";
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private RetainedHeap() {}

    /** A contender: fills itself with keys, and tells whether a key's state was kept. */
    private interface Contender {
        void put(String key);

        /** Calls {@code key} again; true iff it was remembered (the second call saw a spent token). */
        boolean remembered(String key);

        /** The number of keys the limiter says it tracks. */
        long size();

        void close();
    }

    private static final class Sluice implements Contender {
        private final Limit limit = Limit.tokenBucket(10, Rate.perHour(10));
        private final InMemoryRateLimiter limiter;

        /** The default limiter, as {@code create()} gives it: room for 2^20 keys. */
        Sluice() {
            limiter = InMemoryRateLimiter.create();
        }

        @Override
        public void put(String key) {
            limiter.tryAcquire(key, limit);
        }

        @Override
        public boolean remembered(String key) {
            Decision d = limiter.tryAcquire(key, limit);
            return d.remaining() == 8;
        }

        @Override
        public long size() {
            return limiter.trackedKeys();
        }

        @Override
        public void close() {
            limiter.close();
        }
    }

    private static final class Bucket4jMap implements Contender {
        private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();

        private static Bucket newBucket(String key) {
            return Bucket.builder()
                    .addLimit(l -> l.capacity(10).refillGreedy(10, Duration.ofHours(1)))
                    .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
                    .build();
        }

        @Override
        public void put(String key) {
            buckets.computeIfAbsent(key, Bucket4jMap::newBucket).tryConsume(1);
        }

        @Override
        public boolean remembered(String key) {
            Bucket b = buckets.get(key);
            return b != null && b.tryConsumeAndReturnRemaining(1).getRemainingTokens() == 8;
        }

        @Override
        public long size() {
            return buckets.size();
        }

        @Override
        public void close() {}
    }

    public static void main(String[] args) throws InterruptedException {
        String which = args.length > 0 ? args[0] : "all";
        int keys = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        System.out.printf(
                "JVM %s %s, max heap %d MiB, UseCompressedOops=%s, GC %s%n",
                System.getProperty("java.vm.name"),
                System.getProperty("java.vm.version"),
                Runtime.getRuntime().maxMemory() >> 20,
                hotspot.getVMOption("UseCompressedOops").getValue(),
                ManagementFactory.getGarbageCollectorMXBeans().get(0).getName());
        System.out.printf(
                "%d keys, %d repeats; bytes per key = (heap used after the fill − before) / keys, after full GCs%n",
                keys, repeats);
        List<String> names = which.equals("all") ? List.of("sluice", "bucket4j") : List.of(which);
        for (String name : names) {
            measure(name, keys, "warm-up"); // loads classes and compiles the fill, so runs compare alike
            List<Double> perKey = new ArrayList<>();
            for (int r = 1; r <= repeats; r++) {
                perKey.add(measure(name, keys, "run " + r));
            }
            perKey.sort(null);
            System.out.printf(
                    "%-9s median %.1f bytes/key  (runs: %s)%n",
                    name,
                    perKey.get(perKey.size() / 2),
                    perKey.stream().map(v -> String.format("%.1f", v)).toList());
        }
    }

    /**
     * One fill. Returns what the heap grew by from before the fill to after it (the filled limiter alive),
     * per key; prints, as a check, what it shrank by when the limiter was dropped (the same, when the
     * collector has let go of it).
     */
    private static double measure(String name, int keys, String label) throws InterruptedException {
        long before = settledHeapUsed();
        Contender c = name.equals("sluice") ? new Sluice() : new Bucket4jMap();
        long after;
        try {
            for (int i = 0; i < keys; i++) {
                c.put(PREFIX + i);
            }
            after = settledHeapUsed();
        } finally {
            Reference.reachabilityFence(c); // the filled limiter is alive while the heap is measured
        }
        // after measuring: were the keys really kept? (one in 1,000, spread over the fill order)
        int sampled = 0;
        int kept = 0;
        for (int i = 0; i < keys; i += 1000) {
            sampled++;
            if (c.remembered(PREFIX + i)) {
                kept++;
            }
        }
        long size = c.size();
        c.close();
        c = null;
        long dropped = settledHeapUsed();
        double grew = (double) (after - before) / keys;
        double released = (double) (after - dropped) / keys;
        System.out.printf(
                "  %-9s %-8s heap before %,d B, filled %,d B, dropped %,d B: grew %.1f, released %.1f"
                        + " bytes/key; state kept for %d of %d sampled keys%s%n",
                name, label, before, after, dropped, grew, released, kept, sampled, ", tracked " + size);
        return grew;
    }

    /** Heap in use after full collections, once three readings in a row agree within 64 KiB. */
    private static long settledHeapUsed() throws InterruptedException {
        long last = Long.MAX_VALUE;
        int agreeing = 0;
        for (int i = 0; i < 30; i++) {
            System.gc();
            Thread.sleep(50);
            long used = MEMORY.getHeapMemoryUsage().getUsed();
            long rt = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
            long now = Math.min(used, rt);
            agreeing = Math.abs(now - last) < 64 * 1024 ? agreeing + 1 : 0;
            if (agreeing == 2) {
                return now;
            }
            last = now;
        }
        return last;
    }
}
