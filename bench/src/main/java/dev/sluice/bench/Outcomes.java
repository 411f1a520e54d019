package dev.sluice.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Counts allowed and denied calls per thread, reported by JMH beside each score as {@code :allowed} and
 * {@code :denied}, so every result shows the mix it was measured under. Every contender pays the same
 * increment.
 *
 * <p>It also reports {@code :cpuNanos}, the CPU time the benchmark threads used over the same span as the
 * counts. {@code cpuNanos / (allowed + denied)} is CPU time per call: unlike ops/µs it does not fall when
 * other processes take the cores away (time a thread is not scheduled is not CPU time), so on a shared
 * machine it is the steadier figure for comparing contenders. With two threads on one key it still
 * includes the time lost to contention, as far as the two threads ran at the same time.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Outcomes {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    public long allowed;
    public long denied;
    public long cpuNanos;
    private long cpuStart;

    @Setup(Level.Iteration)
    public void start() {
        allowed = 0;
        denied = 0;
        cpuNanos = 0;
        cpuStart = THREADS.getCurrentThreadCpuTime();
    }

    @TearDown(Level.Iteration)
    public void stop() {
        cpuNanos = THREADS.getCurrentThreadCpuTime() - cpuStart;
    }

    void count(boolean wasAllowed) {
        if (wasAllowed) {
            allowed++;
        } else {
            denied++;
        }
    }
}
