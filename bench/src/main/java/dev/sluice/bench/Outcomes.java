package dev.sluice.bench;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Counts allowed and denied calls per thread, reported by JMH beside each score as {@code :allowed} and
 * {@code :denied} (ops/µs), so every result shows the mix it was measured under. Every contender pays the
 * same increment.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Outcomes {
    public long allowed;
    public long denied;

    @Setup(Level.Iteration)
    public void clear() {
        allowed = 0;
        denied = 0;
    }

    void count(boolean wasAllowed) {
        if (wasAllowed) {
            allowed++;
        } else {
            denied++;
        }
    }
}
