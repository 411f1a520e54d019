package dev.sluice.bench;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The floor: GCRA as a bare compare-and-set on one {@link AtomicLong} holding the theoretical arrival
 * time. No key, no {@code Decision}, no exact fractions (the emission interval is whole nanoseconds), no
 * validation. Nothing that decides a rate limit can do much less work per call.
 */
public final class CasGcra {
    private final AtomicLong tat = new AtomicLong();
    private final long intervalNanos;
    private final long toleranceNanos;

    public CasGcra(long intervalNanos, long burst) {
        this.intervalNanos = intervalNanos;
        this.toleranceNanos = intervalNanos * burst;
        tat.set(System.nanoTime());
    }

    /** Allowed iff {@code max(TAT, now) + T − now ≤ burst·T}; then {@code TAT' = max(TAT, now) + T}. */
    public boolean tryAcquire() {
        long now = System.nanoTime();
        for (; ; ) {
            long current = tat.get();
            long next = Math.max(current, now) + intervalNanos;
            if (next - now > toleranceNanos) {
                return false;
            }
            if (tat.compareAndSet(current, next)) {
                return true;
            }
        }
    }
}
