package dev.sluice;

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
}

final class SystemTicker implements Ticker {
    static final SystemTicker INSTANCE = new SystemTicker();

    private final long epochBaseNanos;
    private final long monotonicBase;

    private SystemTicker() {
        java.time.Instant now = java.time.Instant.now();
        this.monotonicBase = System.nanoTime();
        this.epochBaseNanos = Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000_000L), now.getNano());
    }

    @Override
    public long read() {
        return epochBaseNanos + (System.nanoTime() - monotonicBase);
    }

    @Override
    public String toString() {
        return "Ticker.system()";
    }
}
