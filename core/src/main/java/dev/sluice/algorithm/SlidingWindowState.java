package dev.sluice.algorithm;

/**
 * Sliding window counter state: the counts of window number {@code window} and of the one before it.
 */
public record SlidingWindowState(long window, long previous, long current) implements State {
    public static final SlidingWindowState FRESH = new SlidingWindowState(Long.MIN_VALUE, 0, 0);
}
