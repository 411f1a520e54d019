package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Exact;
import dev.sluice.algorithm.FixedWindow;
import dev.sluice.algorithm.Gcra;
import dev.sluice.algorithm.LogState;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;

/**
 * A limit (its identity and its numbers) known to one in-memory limiter ({@link LimitRegistry}), with what the hot
 * path needs precomputed, and the
 * arithmetic of its packed state ({@link PackedState}) that depends on the limit: a fresh key's value, the window
 * or backlog a value stands for, and how long until a key's state equals a fresh key's (what eviction ranks by).
 */
final class RegisteredLimit {
    final Limit limit;
    /** This limit's numbers under its identity: what a slot records its state was written under. */
    final int index;
    /**
     * The limit's {@link Limit#identity()}, numbered: a key's hash is of the key and this, so the same key under the
     * same identity finds the same slot whatever the numbers, and a slot written under other numbers is read
     * under these ({@link Segment#reinterpret}).
     */
    final int identity;

    final Algorithm algorithm;
    /** State fits the slot's long (token bucket, GCRA, fixed window). */
    final boolean packed;

    final long timeScale;
    final long windowNanos;
    /**
     * A packed token bucket value is how far the arrival time lies past the table's base, in units of
     * 1/timeScale ns: at most 2^61 for now's distance from the base plus a backlog of at most 2^62, so
     * it never overflows. Fixed window numbers are kept modulo 2^31. A table is rebuilt on a new base
     * before now gets further from its base than this (never, for most limits).
     */
    final long rebaseIntervalNanos;

    RegisteredLimit(Limit limit, int index, int identity) {
        this.limit = limit;
        this.index = index;
        this.identity = identity;
        this.algorithm = limit.algorithm();
        this.packed = algorithm.isTat() || algorithm == Algorithm.FIXED_WINDOW;
        this.timeScale = limit.timeScale();
        this.windowNanos = limit.periodNanos();
        if (algorithm.isTat()) {
            rebaseIntervalNanos = (Limit.MAX_SCALED / 2) / timeScale;
        } else if (algorithm == Algorithm.FIXED_WINDOW) {
            rebaseIntervalNanos = Exact.saturatingMultiply(windowNanos, 1L << 29);
        } else {
            rebaseIntervalNanos = Long.MAX_VALUE;
        }
    }

    /** The packed state of a key never seen: an empty window, or an arrival time at the base (full). */
    long freshPacked(long now, long base) {
        return algorithm == Algorithm.FIXED_WINDOW ? PackedState.packWindow(window(now, base), 0) : 0;
    }

    /** The window of {@code now} counted from the window of the table's base. */
    long window(long now, long base) {
        return FixedWindow.windowOf(now, limit) - FixedWindow.windowOf(base, limit);
    }

    /** The backlog at {@code now} of a packed token bucket value on a table based at {@code base}. */
    long backlog(long packed, long now, long base) {
        return Gcra.backlogAt(packed, base, now, limit);
    }

    /** The packed token bucket value of a backlog measured at {@code now >= base}. */
    long tat(long backlog, long now, long base) {
        return (now - base) * timeScale + backlog;
    }

    State freshObject() {
        return Algorithms.fresh(limit);
    }

    /** Nanoseconds until this packed state equals a fresh key's (0 when it already does). */
    long untilFresh(long packed, long now, long base) {
        if (algorithm == Algorithm.FIXED_WINDOW) {
            return (packed >>> 32) == window(now, base) && PackedState.windowCount(packed) > 0
                    ? FixedWindow.untilWindowEnd(now, limit)
                    : 0;
        }
        return Exact.ceilDiv(backlog(packed, now, base), timeScale);
    }

    /** Nanoseconds until this object state equals a fresh key's (0 when it already does). */
    long untilFresh(State state, long now) {
        if (state instanceof SlidingWindowState s) {
            long k = Math.floorDiv(now, windowNanos);
            if (s.window() == k && s.current() > 0) {
                return (k + 2) * windowNanos - now;
            }
            if ((s.window() == k && s.previous() > 0) || (s.window() == k - 1 && s.current() > 0)) {
                return (k + 1) * windowNanos - now;
            }
            return 0;
        }
        LogState log = (LogState) state;
        int n = log.size();
        return n == 0 ? 0 : Math.max(0, log.time(n - 1) + windowNanos - now);
    }

    /** The pure step of {@code dev.sluice.algorithm} for this limit on state {@code s}. */
    Step step(State s, long now, long cost) {
        return Algorithms.tryAcquire(s, now, limit, cost);
    }
}
