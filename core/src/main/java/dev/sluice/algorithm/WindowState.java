package dev.sluice.algorithm;

/**
 * Fixed window state: the permits counted in window number {@code window} ({@code floor(t / W)}).
 */
public record WindowState(long window, long count) implements State {
    public static final WindowState FRESH = new WindowState(Long.MIN_VALUE, 0);
}
