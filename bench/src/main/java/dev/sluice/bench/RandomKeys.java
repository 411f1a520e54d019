package dev.sluice.bench;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * 1,000,000 keys drawn uniformly at random: Sluice's in-memory limiter against Bucket4j lock-free buckets
 * in a {@code ConcurrentHashMap} (through {@code computeIfAbsent}). Every key is tracked before the first
 * measurement, so each call is a lookup of an existing key on a working set far larger than the CPU caches.
 *
 * <p>Each call builds its key as a request would, {@code "user:" + id}, from a precomputed random id;
 * {@link #keyOnly} measures that alone (time and allocation), so it can be told apart from the limiters.
 *
 * <p>Limits ({@link Workload#mix}) are hourly quotas, so that no key's bucket is full again while it is measured
 * (a key back at a fresh state carries no information and Sluice may drop it; with a per-second limit most
 * of the million keys would be fresh between two of their calls, and the benchmark would no longer be about
 * a million tracked keys). {@code ADMITTING} is 1,000 an hour with a bucket of 1,000: a key gets a few
 * calls a second here, so a run spends a few dozen of its tokens and every call is allowed and writes
 * state. {@code DENYING} is a bucket of 1 refilled once an hour, spent by the fill, so every measured call
 * is denied.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
public abstract class RandomKeys {
    public static final int KEYS = 1_000_000;
    static final String PREFIX = "user:";

    /** One random stream of key ids per thread (different seeds), long enough not to repeat in a second. */
    @State(Scope.Thread)
    public static class Ids {
        private static final int LENGTH = 1 << 22;
        private static final java.util.concurrent.atomic.AtomicLong SEEDS =
                new java.util.concurrent.atomic.AtomicLong(42);
        private final int[] ids = new int[LENGTH];
        private int next;

        @Setup(Level.Trial)
        public void setUp() {
            SplittableRandom random = new SplittableRandom(SEEDS.getAndIncrement());
            for (int i = 0; i < LENGTH; i++) {
                ids[i] = random.nextInt(KEYS);
            }
        }

        int next() {
            return ids[next++ & (LENGTH - 1)];
        }
    }

    @State(Scope.Benchmark)
    public static class Workload {
        @Param({"ADMITTING", "DENYING"})
        public String mix;

        Limit limit() {
            return mix.equals("ADMITTING")
                    ? Limit.tokenBucket(1000, Rate.perHour(1000))
                    : Limit.tokenBucket(1, Rate.perHour(1));
        }

        Bucket bucket4j() {
            return mix.equals("ADMITTING")
                    ? Bucket.builder()
                            .addLimit(l -> l.capacity(1000).refillGreedy(1000, Duration.ofHours(1)))
                            .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
                            .build()
                    : Bucket.builder()
                            .addLimit(l -> l.capacity(1).refillGreedy(1, Duration.ofHours(1)))
                            .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
                            .build();
        }
    }

    @State(Scope.Benchmark)
    public static class Sluice {
        RateLimiter limiter;
        Limit limit;

        @Setup(Level.Trial)
        public void setUp(Workload workload) {
            limit = workload.limit();
            InMemoryRateLimiter memory = InMemoryRateLimiter.create(); // room for 2^20 keys by default
            for (int id = 0; id < KEYS; id++) {
                memory.tryAcquire(PREFIX + id, limit);
            }
            if (memory.trackedKeys() != KEYS) {
                throw new IllegalStateException("Sluice tracks " + memory.trackedKeys() + " keys, not " + KEYS);
            }
            limiter = memory;
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            // shown in the run's log: the keys were still tracked at the end, not evicted and re-inserted
            System.out.println(
                    "Sluice tracked " + ((InMemoryRateLimiter) limiter).trackedKeys() + " keys after the run");
            limiter.close();
        }
    }

    @State(Scope.Benchmark)
    public static class Bucket4jMap {
        ConcurrentHashMap<String, Bucket> buckets;
        Function<String, Bucket> newBucket;

        @Setup(Level.Trial)
        public void setUp(Workload workload) {
            buckets = new ConcurrentHashMap<>();
            newBucket = k -> workload.bucket4j();
            for (int id = 0; id < KEYS; id++) {
                buckets.computeIfAbsent(PREFIX + id, newBucket).tryConsume(1);
            }
            if (buckets.size() != KEYS) {
                throw new IllegalStateException("the map holds " + buckets.size() + " buckets, not " + KEYS);
            }
        }
    }

    @Benchmark
    public Decision sluiceTokenBucket(Sluice s, Ids ids, Outcomes outcomes) {
        Decision d = s.limiter.tryAcquire(PREFIX + ids.next(), s.limit);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public boolean bucket4j(Bucket4jMap b, Ids ids, Outcomes outcomes) {
        boolean ok = b.buckets.computeIfAbsent(PREFIX + ids.next(), b.newBucket).tryConsume(1);
        outcomes.count(ok);
        return ok;
    }

    /** The key alone: what building {@code "user:" + id} costs inside the two benchmarks above. */
    @Benchmark
    public String keyOnly(Ids ids, Outcomes outcomes) {
        String key = PREFIX + ids.next();
        outcomes.count(true);
        return key;
    }
}
