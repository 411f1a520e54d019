package dev.sluice;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Objects;

/**
 * {@link Ticker#coarse(Duration)}: a scheduler's ticker (by default {@link Ticker#system()}) read once every resolution
 * by a task that the {@link Scheduler} runs (by default on its one timer thread), and the last reading returned. A read
 * is one volatile load instead of a clock read. The task holds the ticker only weakly and stops rescheduling itself
 * once the ticker is no longer referenced; the ticker needs no closing.
 *
 * <p>What it costs in exactness is written on {@link Ticker#coarse(Duration)}. Readings never decrease: one task at a
 * time writes them, from a monotonic clock.
 */
final class CoarseTicker implements Ticker {
    static final Duration MIN_RESOLUTION = Duration.ofNanos(10_000);
    static final Duration MAX_RESOLUTION = Duration.ofSeconds(1);

    private final long resolutionNanos;
    private volatile long nanos;

    private CoarseTicker(long resolutionNanos, Ticker source) {
        this.resolutionNanos = resolutionNanos;
        this.nanos = source.read();
    }

    static CoarseTicker start(Duration resolution, Scheduler scheduler) {
        Objects.requireNonNull(resolution, "resolution must not be null: e.g. Duration.ofMillis(1)");
        Objects.requireNonNull(scheduler, "scheduler must not be null: e.g. Scheduler.system()");
        if (resolution.compareTo(MIN_RESOLUTION) < 0 || resolution.compareTo(MAX_RESOLUTION) > 0) {
            throw new IllegalArgumentException("resolution " + resolution + " is outside " + MIN_RESOLUTION + " to "
                    + MAX_RESOLUTION + ": give e.g. Duration.ofMillis(1)");
        }
        CoarseTicker ticker = new CoarseTicker(resolution.toNanos(), scheduler.ticker());
        new Updater(ticker, resolution, scheduler).schedule();
        return ticker;
    }

    @Override
    public long read() {
        return nanos;
    }

    @Override
    public String toString() {
        return "Ticker.coarse(" + Duration.ofNanos(resolutionNanos) + ")";
    }

    /**
     * Refreshes the reading every resolution until the ticker is gone; holds it weakly, so that it can go (the
     * reference is the updater's only hold on it, which {@code CoarseTickerTest} checks).
     */
    static final class Updater implements Runnable {
        final WeakReference<CoarseTicker> ticker;
        private final Duration resolution;
        private final Scheduler scheduler;

        Updater(CoarseTicker ticker, Duration resolution, Scheduler scheduler) {
            this.ticker = new WeakReference<>(ticker);
            this.resolution = resolution;
            this.scheduler = scheduler;
        }

        void schedule() {
            Scheduler.Cancellable unused = scheduler.schedule(resolution, this);
        }

        @Override
        public void run() {
            CoarseTicker t = ticker.get();
            if (t == null) {
                return; // the ticker was collected: nothing reschedules this task any more
            }
            t.nanos = scheduler.ticker().read();
            schedule();
        }
    }
}
