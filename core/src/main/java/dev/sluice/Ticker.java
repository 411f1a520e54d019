package dev.sluice;

import java.time.Duration;

/**
 * The one seam for time: nanoseconds on the Unix-epoch scale.
 *
 * <p>{@link #system()} is the default: the wall clock read once, then advanced by
 * {@link System#nanoTime()}, so fixed windows align to the epoch and time never goes backwards
 * even when the wall clock is stepped. Tests use {@link ManualTicker} and need no sleeps.
 * Remote stores take time from their server by default; a client ticker given to their builder
 * replaces it (that is how the conformance suite drives them).
 */
@FunctionalInterface
public interface Ticker {

    /** Nanoseconds since 1970-01-01T00:00:00Z. Must never decrease. */
    long read();

    /** The epoch-based monotonic default. */
    static Ticker system() {
        return SystemTicker.INSTANCE;
    }

    /**
     * Opt-in, for the hottest in-memory paths: {@link #system()} read once every {@code resolution} (10 µs to 1 s)
     * by a task on {@link Scheduler#system()}'s timer thread, and the last reading returned, so a read costs a memory
     * load instead of a clock read (about 20 ns on a virtual machine: two thirds of a decision through a held
     * {@link BoundLimit}). Give it to one limiter,
     * {@code InMemoryRateLimiter.builder().ticker(Ticker.coarse(Duration.ofMillis(1)))}, and keep it: each call
     * schedules a task of its own, which stops once its ticker is no longer referenced.
     *
     * <p>What it costs: decisions are not exact in time any more. The reading lags real time by up to
     * {@code resolution}, and by more while the machine is too busy to run the timer on time. A decision is then the
     * one the exact clock would have made that long ago: refills arrive late, fixed windows turn late, and
     * {@code retryAfter} and {@code resetAfter} count from the late reading. When a late reading
     * catches up, the refill of the lag is credited at once, so in a stretch of real time, however long, a key may be
     * granted up to {@code rate × lag} permits more than the exact limit grants in it (with 1 ms and 1,000 permits a
     * second: one permit). Durations are only as fine as the resolution.
     */
    static Ticker coarse(Duration resolution) {
        return CoarseTicker.start(resolution, Scheduler.system());
    }

    /**
     * {@link #coarse(Duration)} reading {@code scheduler}'s ticker on {@code scheduler}'s time: a test gives a
     * {@link ManualScheduler}, and the reading moves when the test advances it.
     */
    static Ticker coarse(Duration resolution, Scheduler scheduler) {
        return CoarseTicker.start(resolution, scheduler);
    }
}
