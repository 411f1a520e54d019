package dev.sluice;

import java.time.Instant;

/** {@link Ticker#system()}: the wall clock read once, then advanced by {@link System#nanoTime()}. */
final class SystemTicker implements Ticker {
    static final SystemTicker INSTANCE = new SystemTicker();

    private final long epochBaseNanos;
    private final long monotonicBase;

    private SystemTicker() {
        Instant now = Instant.now();
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
