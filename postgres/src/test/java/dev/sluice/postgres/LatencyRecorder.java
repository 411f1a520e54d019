package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Times calls against a bound, and tells a late call caused by the code from one caused by the machine.
 *
 * <p>Alongside the calls, threads sleep 1 ms again and again (as many as the calls' threads, so that they
 * wait for a CPU as the callers do) and each records every gap between two of its
 * wake-ups that is more than {@link #STALL_NANOS} longer than the 1 ms it asked for: a stall of the machine
 * (a busy CPU run queue, a GC pause). A call over the bound is <em>explained</em> when the stalls
 * overlapping it add up to at least its overrun (any thread, the caller's included, could be held that
 * long then), or when its overrun is no longer than the worst stall the meters saw while the calls ran
 * (the machine demonstrably holds runnable threads that long; a meter need not be the thread held at
 * the very moment). {@link #assertWithinBound} fails on every unexplained overrun, so a call held by the
 * code itself (a pool's 250 ms, a socket timeout) still fails on a busy machine, and, with
 * {@code -Dsluice.fault.strict=true}, on every overrun at all: the bound as the issue states it, for a
 * quiet machine. Either way the numbers are printed, so a report can say how often it held as such.
 */
final class LatencyRecorder implements AutoCloseable {

    /** Wake-ups later than this are recorded as stalls. */
    static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    static final boolean STRICT = Boolean.getBoolean("sluice.fault.strict");

    private record Interval(long startNanos, long endNanos, long excessNanos, String note) {
        boolean overlaps(Interval o) {
            return startNanos - o.endNanos <= 0 && o.startNanos - endNanos <= 0;
        }
    }

    private final long boundNanos;
    private final AtomicLong maxNanos = new AtomicLong();
    private final AtomicLong worstStallNanos = new AtomicLong();
    private final LongAdder calls = new LongAdder();
    private final List<Interval> overruns = new CopyOnWriteArrayList<>();
    private final List<Interval> stalls = new CopyOnWriteArrayList<>();
    private final List<Thread> meters = new java.util.ArrayList<>();
    private volatile boolean running = true;

    /** Times calls against {@code boundNanos}, with {@code meters} threads measuring the machine's stalls. */
    LatencyRecorder(long boundNanos, int meterThreads) {
        this.boundNanos = boundNanos;
        for (int i = 0; i < meterThreads; i++) {
            Thread meter = new Thread(this::measureStalls, "latency-recorder-stalls-" + i);
            meter.setDaemon(true);
            meters.add(meter);
            meter.start();
        }
    }

    private void measureStalls() {
        long previous = System.nanoTime();
        while (running) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
            // from wake-up to wake-up, so that a stall while this thread runs counts too
            long now = System.nanoTime();
            long late = now - previous - TimeUnit.MILLISECONDS.toNanos(1);
            worstStallNanos.accumulateAndGet(late, Math::max);
            if (late > STALL_NANOS) {
                stalls.add(new Interval(previous, now, late, null));
            }
            previous = now;
        }
    }

    /** Records one call that started and ended at these {@link System#nanoTime()} readings. */
    void record(long startNanos, long endNanos) {
        record(startNanos, endNanos, null);
    }

    /** The same, with a note printed next to the call if it overran (what else happened during it). */
    void record(long startNanos, long endNanos, String note) {
        long took = endNanos - startNanos;
        calls.increment();
        maxNanos.accumulateAndGet(took, Math::max);
        if (took > boundNanos) {
            overruns.add(new Interval(startNanos, endNanos, took - boundNanos, note));
        }
    }

    long maxNanos() {
        return maxNanos.get();
    }

    private List<Interval> unexplained() {
        long worstStall = worstStallNanos.get();
        return overruns.stream().filter(o -> o.excessNanos() > worstStall && stalls.stream()
                .filter(s -> s.overlaps(o)).mapToLong(Interval::excessNanos).sum() < o.excessNanos()).toList();
    }

    String summary() {
        return String.format("%d calls timed, max %.2f ms, %d over the %.0f ms bound %s, %d of them not explained by"
                + " a machine stall (worst stall of a 1 ms sleep: %.2f ms)", calls.sum(), maxNanos.get() / 1e6,
                overruns.size(), boundNanos / 1e6, overruns.stream().map(o -> String.format("%.2f%s",
                        (o.endNanos() - o.startNanos()) / 1e6, o.note() == null ? "" : " " + o.note())).toList(),
                unexplained().size(),
                worstStallNanos.get() / 1e6);
    }

    void assertWithinBound(String what) {
        assertThat(unexplained()).as("%s: calls over the bound not explained by a machine stall; %s", what, summary())
                .isEmpty();
        if (STRICT) {
            assertThat(overruns).as("%s (strict): calls over the bound; %s", what, summary()).isEmpty();
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        for (Thread meter : meters) {
            meter.join(5_000);
        }
    }
}
