package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Exact;
import dev.sluice.algorithm.FixedWindow;
import dev.sluice.algorithm.Gcra;
import dev.sluice.algorithm.LogState;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-process store: exact, lock-free on the single-key path, and bounded in memory.
 *
 * <h2>How state is kept</h2>
 * Keys are not stored. A (key, limit) pair is reduced to a 64-bit SipHash with a secret drawn per
 * limiter ({@link KeyHasher}: collision odds about n²/2⁶⁵ for n keys), and lives in one of up to 64
 * segments of open-addressed primitive arrays: the hash, a {@code short} limit index, and one {@code long}
 * of state. That long is the whole state of a token bucket or GCRA key (how far its theoretical arrival
 * time lies past the table's base instant, in units of 1/{@link Limit#timeScale()} ns) and of a fixed
 * window key (window number and count). A table whose base falls too far behind now is rebuilt on a new
 * base before it decides: the exact arithmetic never overflows and a key idle for years is read right.
 * About 25 bytes per tracked key (25.2 measured at a million keys).
 * Sliding windows and sliding logs need more than a long; their slots point to immutable state objects
 * swapped by CAS.
 *
 * <p>A key the keyed calls meet often gets a {@link BoundLimit handle} of its own ({@link HotKeys}: at most 256,
 * found by the key's {@code String} hash, checked by equality), so its next calls skip the SipHash and the lookup of
 * its slot and decide as {@link #bind} handles do.
 *
 * <h2>Concurrency</h2>
 * A single-key decision reads the state, applies the pure step from {@code dev.sluice.algorithm} and
 * publishes the result with one compare-and-set, retrying on contention; a denied call writes nothing.
 * Inserting a key, evicting and resizing take the segment's monitor. Slots are never reused in place:
 * an evicted or moved slot is marked dead for good, so a late compare-and-set can never land on another
 * key's state. A multi-permit request marks each of its slots locked, in one global order (so two
 * requests cannot deadlock), decides on the locked states and then releases them with the new or the
 * old values: either every permit is taken or none is, and no one sees a partial take.
 *
 * <h2>Memory</h2>
 * At most {@code maxKeys} keys are tracked. When a segment is full, keys whose state equals a fresh
 * key's go first (they carry no information); if that is not enough, the keys closest to fresh go
 * (for a bucket: the one that refills soonest, i.e. the least recently admitted). An evicted key that
 * returns starts fresh, so eviction can only ever be generous to the evicted key, and only when more
 * than {@code maxKeys} keys are active at once.
 */
public final class InMemoryRateLimiter implements RateLimiter {

    /** Default bound on tracked (key, limit) pairs: 2^20, about 25 MB. */
    public static final int DEFAULT_MAX_KEYS = 1 << 20;
    /** Distinct limits one limiter can track; limits are meant to be created once and reused. */
    public static final int MAX_LIMITS = Short.MAX_VALUE;

    private final Ticker ticker;
    private final KeyHasher hasher = new KeyHasher();
    /** The handles of the keys the keyed calls meet most: see {@link HotKeys}. */
    final HotKeys hotKeys = new HotKeys();

    private final Segment[] segments;
    private final int segmentMask;
    private final int maxKeys;
    private final ConcurrentHashMap<Limit, Registered> registry = new ConcurrentHashMap<>();
    private volatile Registered[] byIndex = new Registered[8];
    /** How far now may move past a table's base before the table is rebuilt on a new base. */
    volatile long rebaseIntervalNanos = Long.MAX_VALUE;

    private InMemoryRateLimiter(Builder b) {
        this.ticker = b.ticker;
        this.maxKeys = b.maxKeys;
        int n = Integer.highestOneBit(Math.max(1, Math.min(64, b.maxKeys / 256)));
        this.segments = new Segment[n];
        this.segmentMask = n - 1;
        long now = ticker.read();
        for (int i = 0; i < n; i++) {
            segments[i] = new Segment(this, b.maxKeys / n, now);
        }
    }

    /** A limiter on the epoch-based system ticker with {@link #DEFAULT_MAX_KEYS}. */
    public static InMemoryRateLimiter create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options for {@link InMemoryRateLimiter}. */
    public static final class Builder {
        private Ticker ticker = Ticker.system();
        private int maxKeys = DEFAULT_MAX_KEYS;

        private Builder() {}

        /** Where time comes from (epoch nanoseconds); tests pass a {@link dev.sluice.ManualTicker}. */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker must not be null: use Ticker.system()");
            return this;
        }

        /** The most (key, limit) pairs tracked at once; beyond it the least informative are evicted. */
        public Builder maxKeys(int maxKeys) {
            if (maxKeys < 1) {
                throw new IllegalArgumentException("maxKeys " + maxKeys + " must be at least 1");
            }
            this.maxKeys = maxKeys;
            return this;
        }

        public InMemoryRateLimiter build() {
            return new InMemoryRateLimiter(this);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // RateLimiter

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        MemoryBound kept = hotKeys.get(key, limit);
        if (kept != null) {
            return kept.tryAcquire(cost);
        }
        Registered r = register(limit);
        long h = hasher.hash(key, r.index);
        if (HotKeys.admit(key)) {
            MemoryBound b = new MemoryBound(this, key, limit, BoundLimit.Sleeper.PARK, r, h);
            hotKeys.put(b);
            return b.tryAcquire(cost);
        }
        return acquire(h, r, cost, -1);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        return CompletableFuture.completedFuture(tryAcquire(key, limit, cost));
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        long maxWaitNanos = Algorithms.checkReserve(key, limit, cost, maxWait);
        return acquire(key, register(limit), cost, Gcra.maxWaitScaled(maxWaitNanos, limit));
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        Permit.checkAll(permits);
        return MultiPermit.acquire(this, permits);
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        Registered r = registry.get(limit);
        long now = ticker.read();
        if (r == null) {
            return Algorithms.peek(Algorithms.fresh(limit), now, limit, cost);
        }
        long h = hasher.hash(key, r.index);
        return segmentFor(h).peek(h, r, cost, now);
    }

    @Override
    public void reset(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit);
        Registered r = registry.get(limit);
        if (r == null) {
            return;
        }
        long h = hasher.hash(key, r.index);
        segmentFor(h).remove(h, r.index);
    }

    /** The key's hash, limit and segment resolved once, and its slot remembered: see {@link BoundLimit}. */
    @Override
    public BoundLimit bind(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit); // before the limit is registered
        return new MemoryBound(this, key, limit, BoundLimit.Sleeper.PARK);
    }

    /** Holds no threads or connections: nothing to release. */
    @Override
    public void close() {}

    /** How many (key, limit) pairs are tracked now. */
    public int trackedKeys() {
        int n = 0;
        for (Segment s : segments) {
            n += s.liveCount();
        }
        return n;
    }

    /** The bound given to the builder. */
    public int maxKeys() {
        return maxKeys;
    }

    // ------------------------------------------------------------------------------------------------
    // internals shared with Segment and MultiPermit

    private Decision acquire(String key, Registered r, long cost, long maxWaitScaled) {
        return acquire(hasher.hash(key, r.index), r, cost, maxWaitScaled);
    }

    private Decision acquire(long h, Registered r, long cost, long maxWaitScaled) {
        long now = ticker.read();
        Segment seg = segmentFor(h);
        return r.packed ? seg.acquirePacked(h, r, cost, now, maxWaitScaled) : seg.acquireObject(h, r, cost, now);
    }

    long hash(String key, Registered r) {
        return hasher.hash(key, r.index);
    }

    long now() {
        return ticker.read();
    }

    /** The clock this limiter decides by. */
    public Ticker ticker() {
        return ticker;
    }

    Segment segmentFor(long h) {
        return segments[(int) (h >>> 40) & segmentMask];
    }

    int segmentIndex(long h) {
        return (int) (h >>> 40) & segmentMask;
    }

    Registered registered(int index) {
        return byIndex[index];
    }

    Registered register(Limit limit) {
        Registered r = registry.get(limit);
        return r != null ? r : registerSlow(limit);
    }

    private synchronized Registered registerSlow(Limit limit) {
        Registered r = registry.get(limit);
        if (r != null) {
            return r;
        }
        int index = registry.size();
        if (index >= MAX_LIMITS) {
            throw new IllegalArgumentException("limit " + limit.describe() + " would be the " + (index + 1)
                    + "th distinct limit of this limiter (at most " + MAX_LIMITS
                    + "): create limits once and reuse them rather than one per request");
        }
        r = new Registered(limit, index);
        Registered[] table = byIndex;
        if (index >= table.length) {
            table = Arrays.copyOf(table, table.length * 2);
        }
        table[index] = r;
        byIndex = table;
        if (r.rebaseIntervalNanos < rebaseIntervalNanos) {
            rebaseIntervalNanos = r.rebaseIntervalNanos;
        }
        registry.put(limit, r);
        return r;
    }

    /** A limit known to this limiter, with what the hot path needs precomputed. */
    static final class Registered {
        final Limit limit;
        final int index;
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

        Registered(Limit limit, int index) {
            this.limit = limit;
            this.index = index;
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
            return algorithm == Algorithm.FIXED_WINDOW ? packWindow(window(now, base), 0) : 0;
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
                return (packed >>> 32) == window(now, base) && windowCount(packed) > 0
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
    }

    // ------------------------------------------------------------------------------------------------
    // packed encodings

    /** A slot that was evicted or moved to a new table: never written again. Packed values are never negative. */
    static final long DEAD = Long.MIN_VALUE;
    /** A slot held by a multi-permit request for a moment. */
    static final long LOCKED = Long.MIN_VALUE + 1;

    /**
     * A fixed window state: the window counted from the table's base window (0 to 2^29, see
     * {@link Registered#rebaseIntervalNanos}) above, the count below; never negative.
     */
    static long packWindow(long windowFromBase, long count) {
        return windowFromBase << 32 | count;
    }

    static long windowCount(long packed) {
        return packed & 0xFFFF_FFFFL;
    }

    /** The pure state a packed value stands for at {@code now}, on a table based at {@code base}. */
    static State unpack(Registered r, long packed, long now, long base) {
        if (r.algorithm == Algorithm.FIXED_WINDOW) {
            return (packed >>> 32) == r.window(now, base)
                    ? new WindowState(FixedWindow.windowOf(now, r.limit), windowCount(packed))
                    : WindowState.FRESH;
        }
        return new TatState(r.backlog(packed, now, base), now);
    }

    /** The packed value of a pure state produced at {@code now}, on a table based at {@code base}. */
    static long pack(Registered r, State state, long now, long base) {
        if (state instanceof WindowState w) {
            return w.equals(WindowState.FRESH)
                    ? r.freshPacked(now, base)
                    : packWindow(w.window() - FixedWindow.windowOf(base, r.limit), w.count());
        }
        TatState t = (TatState) state;
        return r.tat(Gcra.backlogAt(t.backlogScaled(), t.atNanos(), now, r.limit), now, base);
    }

    /** Placeholder for a multi-permit request's hold on an object slot, keeping the state it replaced. */
    static final class LockedRef {
        final State held;

        LockedRef(State held) {
            this.held = held;
        }
    }

    /** The mark of an evicted or moved object slot. */
    static final Object DEAD_REF = new Object();

    static Step step(Registered r, State s, long now, long cost) {
        return Algorithms.tryAcquire(s, now, r.limit, cost);
    }
}
