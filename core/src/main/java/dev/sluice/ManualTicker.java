package dev.sluice;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A ticker that moves only when told to: for tests, simulations and the conformance suite.
 * Thread-safe. Reads nanoseconds since the Unix epoch like every {@link Ticker}.
 */
public final class ManualTicker implements Ticker {
    private final AtomicLong nanos;

    private ManualTicker(long epochNanos) {
        this.nanos = new AtomicLong(epochNanos);
    }

    /** A ticker frozen at the given epoch nanoseconds. */
    public static ManualTicker atEpochNanos(long epochNanos) {
        return new ManualTicker(epochNanos);
    }

    /** A ticker frozen at the given instant. */
    public static ManualTicker at(Instant instant) {
        return new ManualTicker(
                Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano()));
    }

    @Override
    public long read() {
        return nanos.get();
    }

    public ManualTicker advance(Duration d) {
        return advanceNanos(d.toNanos());
    }

    public ManualTicker advanceNanos(long delta) {
        if (delta < 0) {
            throw new IllegalArgumentException("delta " + delta + " ns is negative: a ticker never goes backwards");
        }
        nanos.addAndGet(delta);
        return this;
    }

    /** Moves the ticker to {@code epochNanos}; it must not be earlier than now. */
    public ManualTicker set(long epochNanos) {
        long cur = nanos.get();
        if (epochNanos < cur) {
            throw new IllegalArgumentException(
                    "epochNanos " + epochNanos + " is before the ticker's " + cur + ": a ticker never goes backwards");
        }
        nanos.set(epochNanos);
        return this;
    }

    @Override
    public String toString() {
        return "ManualTicker[" + nanos.get() + "]";
    }
}
