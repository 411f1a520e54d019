package dev.sluice.bench;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Where a hot-key decision's time goes, one thread: the clocks every limiter reads (Sluice and Guava read
 * {@code System.nanoTime}, Bucket4j by default {@code System.currentTimeMillis}), Sluice's decision with a
 * clock that costs nothing (so the difference to {@link HotKey1Thread#sluiceTokenBucket} is the clock), and
 * the allocation budget: one {@link Decision}, returned, whose {@code gc.alloc.rate.norm} is the most a
 * {@code tryAcquire} may allocate. Every method counts its calls in {@link Outcomes}, as the others do, for
 * the CPU time per call.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g", "-XX:+AlwaysPreTouch"})
@Threads(1)
@State(Scope.Thread)
public class Breakdown {

    /** Advances 1 µs per read and costs a field increment: a clock with the price taken out. */
    static final class SteppingTicker implements Ticker {
        private long nanos = System.currentTimeMillis() * 1_000_000L;

        @Override
        public long read() {
            return nanos += 1_000;
        }
    }

    @State(Scope.Thread)
    public static class FreeClock {
        @Param({"ADMITTING", "DENYING"})
        public Mix mix;

        String key;
        Limit tokenBucket;
        RateLimiter sluice;

        @Setup(Level.Trial)
        public void setUp() {
            key = "user:" + 4242;
            tokenBucket = mix.sluiceTokenBucket();
            sluice = InMemoryRateLimiter.builder().ticker(new SteppingTicker()).build();
        }
    }

    long remaining = 7;
    final Ticker system = Ticker.system();

    @Benchmark
    public long nanoTime(Outcomes outcomes) {
        outcomes.count(true);
        return System.nanoTime();
    }

    @Benchmark
    public long currentTimeMillis(Outcomes outcomes) {
        outcomes.count(true);
        return System.currentTimeMillis();
    }

    @Benchmark
    public long sluiceSystemTicker(Outcomes outcomes) {
        outcomes.count(true);
        return system.read();
    }

    /** {@link HotKey#sluiceTokenBucket} with a free clock (time steps 1 µs a call: DENYING allows 1 in 1,000). */
    @Benchmark
    public Decision sluiceTokenBucketFreeClock(FreeClock c, Outcomes outcomes) {
        Decision d = c.sluice.tryAcquire(c.key, c.tokenBucket);
        outcomes.count(d.allowed());
        return d;
    }

    @Benchmark
    public Decision newDecision(Outcomes outcomes) {
        outcomes.count(true);
        return new Decision(true, 100, remaining, 0, 123_456_789L);
    }
}
