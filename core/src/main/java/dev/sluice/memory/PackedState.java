package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.algorithm.FixedWindow;
import dev.sluice.algorithm.Gcra;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;

/**
 * The state of a token bucket, GCRA or fixed window key as one {@code long}, never negative (the negative values
 * are {@link Slots#DEAD} and {@link Slots#LOCKED}), relative to its table's base instant ({@link Slots#base}):
 *
 * <ul>
 *   <li>token bucket and GCRA: how far the key's theoretical arrival time lies past the base, in units of
 *       1/{@link dev.sluice.Limit#timeScale()} ns ({@link RegisteredLimit#tat});
 *   <li>fixed window: the window counted from the base's window above, the count below ({@link #packWindow}).
 * </ul>
 *
 * and the conversions between it and the pure states of {@code dev.sluice.algorithm}.
 */
final class PackedState {
    private PackedState() {}

    /**
     * A fixed window state: the window counted from the table's base window (0 to 2^29, see
     * {@link RegisteredLimit#rebaseIntervalNanos}) above, the count below; never negative.
     */
    static long packWindow(long windowFromBase, long count) {
        return windowFromBase << 32 | count;
    }

    static long windowCount(long packed) {
        return packed & 0xFFFF_FFFFL;
    }

    /** The pure state a packed value stands for at {@code now}, on a table based at {@code base}. */
    static State unpack(RegisteredLimit r, long packed, long now, long base) {
        if (r.algorithm == Algorithm.FIXED_WINDOW) {
            return (packed >>> 32) == r.window(now, base)
                    ? new WindowState(FixedWindow.windowOf(now, r.limit), windowCount(packed))
                    : WindowState.FRESH;
        }
        return new TatState(r.backlog(packed, now, base), now);
    }

    /** The packed value of a pure state produced at {@code now}, on a table based at {@code base}. */
    static long pack(RegisteredLimit r, State state, long now, long base) {
        if (state instanceof WindowState w) {
            return w.equals(WindowState.FRESH)
                    ? r.freshPacked(now, base)
                    : packWindow(w.window() - FixedWindow.windowOf(base, r.limit), w.count());
        }
        TatState t = (TatState) state;
        return r.tat(Gcra.backlogAt(t.backlogScaled(), t.atNanos(), now, r.limit), now, base);
    }
}
