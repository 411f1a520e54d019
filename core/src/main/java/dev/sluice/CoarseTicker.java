package dev.sluice;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * {@link Ticker#coarse(Duration)}: {@link Ticker#system()} read by a daemon thread once every resolution, and the
 * last reading returned. A read is one volatile load instead of a clock read. The thread holds the ticker only
 * weakly and ends once the ticker is no longer referenced; the ticker needs no closing.
 *
 * <p>What it costs in exactness is written on {@link Ticker#coarse(Duration)}. Readings never decrease: one thread
 * writes them, from a monotonic clock.
 */
final class CoarseTicker implements Ticker {
    static final Duration MIN_RESOLUTION = Duration.ofNanos(10_000);
    static final Duration MAX_RESOLUTION = Duration.ofSeconds(1);

    private final long resolutionNanos;
    private volatile long nanos;

    private CoarseTicker(long resolutionNanos) {
        this.resolutionNanos = resolutionNanos;
        this.nanos = SystemTicker.INSTANCE.read();
    }

    static CoarseTicker start(Duration resolution) {
        Objects.requireNonNull(resolution, "resolution must not be null: e.g. Duration.ofMillis(1)");
        if (resolution.compareTo(MIN_RESOLUTION) < 0 || resolution.compareTo(MAX_RESOLUTION) > 0) {
            throw new IllegalArgumentException("resolution " + resolution + " is outside " + MIN_RESOLUTION + " to "
                    + MAX_RESOLUTION + ": give e.g. Duration.ofMillis(1)");
        }
        CoarseTicker ticker = new CoarseTicker(resolution.toNanos());
        Thread updater = new Thread(new Updater(ticker), "sluice-coarse-ticker-" + resolution);
        updater.setDaemon(true);
        updater.start();
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

    /** Refreshes the reading until the ticker is gone; holds it weakly, so that it can go. */
    private static final class Updater implements Runnable {
        private final WeakReference<CoarseTicker> ticker;
        private final long resolutionNanos;

        Updater(CoarseTicker ticker) {
            this.ticker = new WeakReference<>(ticker);
            this.resolutionNanos = ticker.resolutionNanos;
        }

        @Override
        public void run() {
            for (; ; ) {
                CoarseTicker t = ticker.get();
                if (t == null) {
                    return;
                }
                t.nanos = SystemTicker.INSTANCE.read();
                t = null; // not held while parked: the ticker may be collected meanwhile
                LockSupport.parkNanos(resolutionNanos);
            }
        }
    }
}
