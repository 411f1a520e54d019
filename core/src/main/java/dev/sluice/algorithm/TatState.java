package dev.sluice.algorithm;

/**
 * Token bucket and GCRA state: how far the theoretical arrival time (TAT, the instant the bucket is full
 * again) lies ahead of {@code atNanos}, in units of {@code 1/limit.timeScale()} ns. A backlog of zero is a
 * full bucket, i.e. a fresh key.
 *
 * @param backlogScaled {@code max(0, TAT - atNanos) × timeScale}
 * @param atNanos       the epoch instant the backlog was measured at
 */
public record TatState(long backlogScaled, long atNanos) implements State {
    public static final TatState FRESH = new TatState(0, 0);

    public TatState {
        if (backlogScaled < 0) {
            throw new IllegalArgumentException("backlogScaled " + backlogScaled + " must not be negative");
        }
    }
}
