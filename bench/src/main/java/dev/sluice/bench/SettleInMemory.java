package dev.sluice.bench;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.memory.InMemoryRateLimiter;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Issue 30 in one process, one thread, one hot key that admits every call (capacity 10⁹, refill 3·10⁸/s, as
 * {@link Mix#ADMITTING}):
 *
 * <ul>
 *   <li>a cost known afterwards, an estimate of 8 settled at 5: {@code sluiceEstimateSettle}
 *       ({@code tryAcquireEstimate} then {@code settle}, a pending record in between) against Bucket4j's nearest
 *       equivalent {@code bucket4jConsumeAddTokens} ({@code tryConsume(8)} then {@code addTokens(3)}: no record, so
 *       neither idempotent nor expiring), and {@code sluiceTryAcquire}, one plain decision, for scale;</li>
 *   <li>work in flight, a slot taken and released: {@code sluiceSlot} ({@code inFlight()} with a lease) against
 *       {@code semaphore}, a {@link Semaphore}'s {@code tryAcquire}/{@code release} (no key, no lease: the floor).</li>
 * </ul>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Threads(1)
@State(Scope.Benchmark)
public class SettleInMemory {
    private static final Duration WITHIN = Duration.ofMinutes(1);
    private static final Duration LEASE = Duration.ofSeconds(30);

    String key;
    Limit limit;
    RateLimiter sluice;
    InFlightLimiter slots;
    Bucket bucket;
    Semaphore semaphore;
    long ids;

    @Setup
    public void setUp() {
        key = "user:" + 4242;
        limit = Limit.tokenBucket(1_000_000_000L, Rate.perSecond(300_000_000L));
        sluice = InMemoryRateLimiter.create();
        slots = sluice.inFlight();
        bucket = Bucket.builder()
                .addLimit(Bandwidth.builder()
                        .capacity(1_000_000_000L)
                        .refillGreedy(300_000_000L, Duration.ofSeconds(1))
                        .build())
                .build();
        semaphore = new Semaphore(4);
    }

    @TearDown
    public void tearDown() {
        sluice.close();
    }

    @Benchmark
    public Decision sluiceTryAcquire(Outcomes outcomes) {
        Decision d = sluice.tryAcquire(key, limit, 8);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public Settlement sluiceEstimateSettle(Outcomes outcomes) {
        String id = Long.toString(++ids, 36);
        Decision d = sluice.tryAcquireEstimate(key, limit, 8, id, WITHIN);
        outcomes.count(d.allowed());
        return d.allowed() ? sluice.settle(key, limit, id, 5) : Settlement.NOT_PENDING;
    }

    @Benchmark
    public boolean bucket4jConsumeAddTokens(Outcomes outcomes) {
        boolean ok = bucket.tryConsume(8);
        outcomes.count(ok);
        if (ok) {
            bucket.addTokens(3);
        }
        return ok;
    }

    @Benchmark
    public boolean sluiceSlot(Outcomes outcomes) {
        String holder = Long.toString(++ids, 36);
        boolean ok = slots.tryAcquire(key, 4, holder, LEASE).allowed();
        outcomes.count(ok);
        return ok && slots.release(key, holder);
    }

    @Benchmark
    public boolean semaphore(Outcomes outcomes) {
        boolean ok = semaphore.tryAcquire();
        outcomes.count(ok);
        if (ok) {
            semaphore.release();
        }
        return ok;
    }
}
