package dev.sluice.bench;

import dev.sluice.Decision;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The allocation budget of a decision: one {@link Decision}, returned (so it escapes). With {@code -prof gc}
 * its {@code gc.alloc.rate.norm} is the size of the record on this JVM, the most a {@code tryAcquire} may
 * allocate per call.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
@State(Scope.Thread)
public class DecisionAlloc {
    long remaining = 7;

    @Benchmark
    public Decision newDecision() {
        return new Decision(true, 100, remaining, 0, 123_456_789L);
    }
}
