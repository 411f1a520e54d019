package dev.sluice;

import java.time.Instant;

/** {@link Ticker#system()}: the wall clock read once, then advanced by {@link System#nanoTime()}. */
final class SystemTicker implements Ticker {
    static final SystemTicker INSTANCE = new SystemTicker();

    /**
     * The wall clock at start minus {@code System.nanoTime()} then: a read is {@code nanoTime() + offset}, which in
     * two's complement is exactly {@code epochBase + (nanoTime() − monotonicBase)} with one load and one add.
     */
    private final long offset;

    private SystemTicker() {
        Instant now = Instant.now();
        long monotonicBase = System.nanoTime();
        long epochBaseNanos = Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000_000L), now.getNano());
        this.offset = epochBaseNanos - monotonicBase;
    }

    @Override
    public long read() {
        return System.nanoTime() + offset;
    }

    @Override
    public String toString() {
        return "Ticker.system()";
    }
}
