package dev.sluice.bench;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
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
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * One hot key, every contender side by side: Sluice's in-memory limiter (token bucket and GCRA, both
 * returning a full {@link Decision}), Bucket4j lock-free buckets looked up through
 * {@code ConcurrentHashMap.computeIfAbsent} (the usual way to key them), Guava's {@code RateLimiter},
 * Resilience4j's {@code AtomicRateLimiter}, and {@link CasGcra}, a bare CAS on one {@code AtomicLong} as the
 * floor. Guava, Resilience4j and the floor have no keys: they are one limiter.
 *
 * <p>{@link HotKey1Thread}, {@link HotKey2Threads} and {@link HotKey4Threads} run these methods with 1, 2 and 4
 * threads; {@link #mix}
 * runs each under a limit that admits every call and one that denies nearly every call (see {@link Mix}).
 * Every method returns its result to JMH (so nothing is optimised away) and counts it in {@link Outcomes}.
 *
 * <p>The heap is touched whole at start ({@code -XX:+AlwaysPreTouch}): without it a contender that allocates per
 * call (a {@code Decision}, Bucket4j's state copy) pays the kernel's first touch of each eden page until the first
 * collection, which at ~1 GB/s of allocation spans the warm-up and the first iterations (bench/README.md).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@State(Scope.Benchmark)
public abstract class HotKey {

    @Param({"ADMITTING", "DENYING"})
    public Mix mix;

    /** Not a constant: read from a field, as a request's key would be. */
    String key;

    Limit tokenBucket;
    Limit gcra;
    RateLimiter sluice;
    /** The same store behind FailSafeRateLimiter: what the failure policy costs a healthy store's decision. */
    RateLimiter failSafe;
    /** Sluice's handle of the key under {@link #tokenBucket}: {@code sluice.bind(key, tokenBucket)}. */
    BoundLimit bound;
    /**
     * Sluice on the opt-in {@code Ticker.coarse(1 ms)} (a volatile read instead of a clock read; not exact in time, see
     * its Javadoc), and its handle: what the clock costs the others. Built only for the benchmarks named
     * {@code …Coarse}, so that no other starts the ticker's thread (null for the others). Their benchmarks read them
     * through {@code requireNonNull}, which the JIT folds into the call's own null check.
     */
    @Nullable
    RateLimiter sluiceCoarse;

    @Nullable
    BoundLimit boundCoarse;

    ConcurrentHashMap<String, Bucket> buckets;
    /** One Bucket4j bucket held by the caller, no map: what the bound handle compares with. */
    Bucket bucket;

    Function<String, Bucket> newBucket;
    com.google.common.util.concurrent.RateLimiter guava;
    AtomicRateLimiter resilience4j;
    CasGcra floor;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        key = "user:" + 4242;
        tokenBucket = mix.sluiceTokenBucket();
        gcra = mix.sluiceGcra();
        sluice = InMemoryRateLimiter.create();
        failSafe = dev.sluice.failsafe.FailSafeRateLimiter.builder(InMemoryRateLimiter.create())
                .build();
        bound = sluice.bind(key, tokenBucket);
        buckets = new ConcurrentHashMap<>();
        bucket = mix.bucket4j();
        Mix m = mix;
        newBucket = k -> m.bucket4j();
        guava = mix.guava();
        resilience4j = mix.resilience4j();
        floor = mix.casGcra();
        if (params.getBenchmark().endsWith("Coarse")) {
            RateLimiter coarse = InMemoryRateLimiter.builder()
                    .ticker(Ticker.coarse(Duration.ofMillis(1)))
                    .build();
            sluiceCoarse = coarse;
            boundCoarse = coarse.bind(key, tokenBucket);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sluice.close();
        failSafe.close();
        if (sluiceCoarse != null) {
            sluiceCoarse.close();
        }
    }

    @Benchmark
    public Decision sluiceTokenBucket(Outcomes outcomes) {
        Decision d = sluice.tryAcquire(key, tokenBucket);
        outcomes.count(d.allowed());
        return d;
    }

    /** The bound handle: no key to hash, the slot remembered. Compare with {@link #bucket4jBucket}. */
    @Benchmark
    public Decision sluiceBound(Outcomes outcomes) {
        Decision d = bound.tryAcquire();
        outcomes.count(d.allowed());
        return d;
    }

    /** The bound handle when the caller keeps only the verdict: the Decision need not exist (escape analysis). */
    @Benchmark
    public boolean sluiceBoundAllowed(Outcomes outcomes) {
        boolean ok = bound.tryAcquire().allowed();
        outcomes.count(ok);
        return ok;
    }

    /** The bound handle's verdict-only call, {@code bound.tryAcquirePermit()}: no Decision is built. */
    @Benchmark
    public boolean sluiceBoundPermit(Outcomes outcomes) {
        boolean ok = bound.tryAcquirePermit();
        outcomes.count(ok);
        return ok;
    }

    /** {@link #sluiceBound} on the coarse ticker. */
    @Benchmark
    public Decision sluiceBoundCoarse(Outcomes outcomes) {
        Decision d = Objects.requireNonNull(boundCoarse).tryAcquire();
        outcomes.count(d.allowed());
        return d;
    }

    /** {@link #sluiceTokenBucket} (the keyed call) on the coarse ticker. */
    @Benchmark
    public Decision sluiceTokenBucketCoarse(Outcomes outcomes) {
        Decision d = Objects.requireNonNull(sluiceCoarse).tryAcquire(key, tokenBucket);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public Decision sluiceFailSafeTokenBucket(Outcomes outcomes) {
        Decision d = failSafe.tryAcquire(key, tokenBucket);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public Decision sluiceGcra(Outcomes outcomes) {
        Decision d = sluice.tryAcquire(key, gcra);
        outcomes.count(d.allowed());
        return d;
    }

    /** {@code tryConsume(1)}: a boolean, the cheapest Bucket4j call. */
    @Benchmark
    public boolean bucket4j(Outcomes outcomes) {
        boolean ok = buckets.computeIfAbsent(key, newBucket).tryConsume(1);
        outcomes.count(ok);
        return ok;
    }

    /** {@code tryConsume(1)} on a bucket the caller holds: no map. */
    @Benchmark
    public boolean bucket4jBucket(Outcomes outcomes) {
        boolean ok = bucket.tryConsume(1);
        outcomes.count(ok);
        return ok;
    }

    /** {@code tryConsumeAndReturnRemaining(1)}: remaining and nanos to wait, the facts a Decision carries. */
    @Benchmark
    public ConsumptionProbe bucket4jProbe(Outcomes outcomes) {
        ConsumptionProbe p = buckets.computeIfAbsent(key, newBucket).tryConsumeAndReturnRemaining(1);
        outcomes.count(p.isConsumed());
        return p;
    }

    @Benchmark
    public boolean guava(Outcomes outcomes) {
        boolean ok = guava.tryAcquire();
        outcomes.count(ok);
        return ok;
    }

    @Benchmark
    public boolean resilience4j(Outcomes outcomes) {
        boolean ok = resilience4j.acquirePermission();
        outcomes.count(ok);
        return ok;
    }

    @Benchmark
    public boolean casGcraFloor(Outcomes outcomes) {
        boolean ok = floor.tryAcquire();
        outcomes.count(ok);
        return ok;
    }
}
