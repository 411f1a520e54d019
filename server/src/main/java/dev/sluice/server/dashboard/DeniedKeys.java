package dev.sluice.server.dashboard;

import dev.sluice.Ticker;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The keys denied most often over the last minute, for the dashboard, in memory that does not grow with the number
 * of keys: a heavy-hitters sketch ({@link SpaceSaving}, {@value #DEFAULT_COUNTERS} counters) per 10-second step and
 * per stripe, merged when read.
 *
 * <h2>Time</h2>
 * Denials are counted in steps of {@value #STEP_SECONDS} s of the service's clock; the last {@value #STEPS} steps are
 * kept, the current one included, and a step is cleared when its slot is reused. So a denial counts for 50 to 60 s
 * ({@link #top} reads the steps that began less than a minute ago) and nothing older than a minute is ever shown.
 *
 * <h2>Threads</h2>
 * {@link #record} runs on the decision path of every denial, on any thread (Netty's event loops, a remote store's
 * I/O threads, gRPC's). Each thread has a home stripe (stripes are handed out round-robin, one per thread while there are enough),
 * guarded by a flag taken with one compare-and-set: a thread whose home is busy (another thread sharing it, or a
 * reader copying it) takes the next free stripe instead, and only when every stripe is busy does it spin on its home.
 * A denial is O(1): one clock read, one CAS, one Space-Saving offer (a hash probe and a few array writes; O(capacity)
 * once per step and stripe to clear a step), and allocates nothing (a key over {@value #MAX_KEY_CHARS} characters
 * is cut first, which allocates its cut copy). Admitted decisions never come here.
 *
 * <h2>Reading</h2>
 * {@link #top} merges, for every stripe and every step in the window, the counters of each key: a key's count is the
 * sum of its counts (each an overestimate by at most its error) and the answer gives the bounds of the true number:
 * {@code lower} (the counts minus their errors) and {@code upper} (plus, for every full summary that does not hold
 * the key, the most it can have been seen there unnoticed). In one stripe and one step, a key with more than 1/
 * {@value #DEFAULT_COUNTERS} of the denials is always there; the counts of all keys add up to the denials exactly.
 *
 * <h2>Memory</h2>
 * stripes × {@value #STEPS} steps × {@value #DEFAULT_COUNTERS} counters (stripes: twice the processors, a power of
 * two, at most {@value #MAX_STRIPES}), each holding a reference to a key of at most {@value #MAX_KEY_CHARS}
 * characters (then {@code …}): with 4 stripes (2 processors) 3,072 counters, about 200 KB of arrays plus the keys
 * they hold, under 2 MB even when every key is that long, whatever the number of keys denied.
 */
public final class DeniedKeys {
    /** Counters in each stripe's summary of one step. */
    public static final int DEFAULT_COUNTERS = 128;
    /** Steps kept, the current one included. */
    public static final int STEPS = 6;

    public static final int STEP_SECONDS = 10;
    /** The window {@link #top} reads: steps that began less than this long ago. */
    public static final int WINDOW_SECONDS = STEPS * STEP_SECONDS;
    /** Keys longer than this are kept cut to this length, with {@code …} appended. */
    public static final int MAX_KEY_CHARS = 256;

    static final int MAX_STRIPES = 16;
    private static final long STEP_NANOS = STEP_SECONDS * 1_000_000_000L;

    /** Each thread's home stripe number (taken modulo the stripe count), handed out round-robin. */
    private static final AtomicInteger NEXT_HOME = new AtomicInteger();

    private static final ThreadLocal<int[]> HOME =
            ThreadLocal.withInitial(() -> new int[] {NEXT_HOME.getAndIncrement()});

    private final Ticker clock;
    private final Stripe[] stripes;
    private final int mask;

    /** A sketch on the service's clock with the default sizes. */
    public DeniedKeys(Ticker clock) {
        this(clock, DEFAULT_COUNTERS, defaultStripes());
    }

    DeniedKeys(Ticker clock, int counters, int stripeCount) {
        if (Integer.bitCount(stripeCount) != 1) {
            throw new IllegalArgumentException("stripes " + stripeCount + " must be a power of two");
        }
        this.clock = clock;
        this.stripes = new Stripe[stripeCount];
        for (int i = 0; i < stripeCount; i++) {
            stripes[i] = new Stripe(counters);
        }
        this.mask = stripeCount - 1;
    }

    static int defaultStripes() {
        int wanted = 2 * Runtime.getRuntime().availableProcessors();
        return Math.min(MAX_STRIPES, Integer.highestOneBit(Math.max(2, wanted) * 2 - 1));
    }

    /** Counts one denial of {@code key} (a store key: domain and entries); null is ignored. */
    public void record(String key) {
        if (key == null) {
            return;
        }
        String k = key.length() <= MAX_KEY_CHARS ? key : cut(key);
        long step = Math.floorDiv(clock.read(), STEP_NANOS);
        Stripe s = acquire();
        try {
            s.summary(step).offer(k);
        } finally {
            s.release();
        }
    }

    /** The first {@value #MAX_KEY_CHARS} characters and {@code …}, never splitting a surrogate pair. */
    static String cut(String key) {
        int end = Character.isHighSurrogate(key.charAt(MAX_KEY_CHARS - 1)) ? MAX_KEY_CHARS - 1 : MAX_KEY_CHARS;
        return key.substring(0, end) + '…';
    }

    private Stripe acquire() {
        int home = HOME.get()[0];
        for (int i = 0; i <= mask; i++) {
            Stripe s = stripes[(home + i) & mask];
            if (s.tryAcquire()) {
                return s;
            }
        }
        Stripe s = stripes[home & mask];
        while (!s.tryAcquire()) {
            Thread.onSpinWait();
        }
        return s;
    }

    /**
     * One key's denials over the window.
     *
     * @param key   the store key as denied, cut to {@value #MAX_KEY_CHARS} characters and {@code …}
     * @param count the estimate: the sum of its counters
     * @param lower at least this many denials certainly happened
     * @param upper at most this many can have happened
     */
    public record KeyCount(String key, long count, long lower, long upper) {}

    /**
     * The denials of the window, read at once.
     *
     * @param denials every denial counted in the window (exact)
     * @param keys    the keys with the most, by count, then key
     */
    public record Top(long denials, List<KeyCount> keys) {}

    /** The {@code n} keys with the most denials among those of the steps that began less than a minute ago. */
    public Top top(int n) {
        long step = Math.floorDiv(clock.read(), STEP_NANOS);
        // key -> {sum of counts, sum of errors, minus the untracked bounds of the summaries holding it}
        Map<String, long[]> merged = new HashMap<>();
        long denials = 0;
        long bounds = 0; // the untracked bounds of every summary read (0 for those not full)
        for (Stripe s : stripes) {
            s.acquireForRead();
            try {
                for (int slot = 0; slot < STEPS; slot++) {
                    long begun = s.steps[slot];
                    if (begun <= step - STEPS || begun > step) {
                        continue; // older than the window, never used, or ahead of a clock set back
                    }
                    SpaceSaving summary = s.summaries[slot];
                    denials += summary.total();
                    long bound = summary.untrackedBound();
                    bounds += bound;
                    summary.forEach((key, count, error) -> {
                        long[] m = merged.computeIfAbsent(key, x -> new long[3]);
                        m[0] += count;
                        m[1] += error;
                        m[2] -= bound;
                    });
                }
            } finally {
                s.release();
            }
        }
        List<KeyCount> keys = new ArrayList<>(merged.size());
        for (Map.Entry<String, long[]> e : merged.entrySet()) {
            long[] m = e.getValue();
            keys.add(new KeyCount(e.getKey(), m[0], m[0] - m[1], m[0] + bounds + m[2]));
        }
        keys.sort(Comparator.comparingLong(KeyCount::count).reversed().thenComparing(KeyCount::key));
        return new Top(denials, List.copyOf(keys.subList(0, Math.min(n, keys.size()))));
    }

    /** Keys held by every summary together (tests: the memory bound). */
    int trackedKeys() {
        int n = 0;
        for (Stripe s : stripes) {
            s.acquireForRead();
            try {
                for (SpaceSaving summary : s.summaries) {
                    n += summary.size();
                }
            } finally {
                s.release();
            }
        }
        return n;
    }

    /** Most keys the summaries can hold together. */
    int capacity() {
        return stripes.length * STEPS * stripes[0].summaries[0].capacity();
    }

    int stripeCount() {
        return stripes.length;
    }

    /** Padding before a stripe's flag: whatever precedes the stripe in memory stays off the flag's cache line. */
    @SuppressWarnings("unused")
    private static class StripePadding {
        private long p1, p2, p3, p4, p5, p6, p7;
    }

    /** A stripe's flag: 1 taken, 0 free. */
    private static class StripeFlag extends StripePadding {
        volatile int taken;
    }

    private static final VarHandle TAKEN;

    static {
        try {
            TAKEN = MethodHandles.lookup().findVarHandle(StripeFlag.class, "taken", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * One stripe: a summary per step slot, each with the step it counts, and the flag that confines them to one thread
     * at a time, set with one CAS and cleared with a release store (all a lock needs: what the holder wrote is seen by
     * the next holder, whose CAS reads the cleared flag). The flag is padded on both sides (superclass fields come
     * first): without it, a thread writing the first stripe's flag slowed every other thread reading the stripes
     * array beside it by half (measured: 15 → 31 ns a denial, two threads).
     */
    @SuppressWarnings("unused")
    private static final class Stripe extends StripeFlag {
        private long q1, q2, q3, q4, q5, q6, q7;
        final SpaceSaving[] summaries = new SpaceSaving[STEPS];
        final long[] steps = new long[STEPS];

        Stripe(int counters) {
            for (int i = 0; i < STEPS; i++) {
                summaries[i] = new SpaceSaving(counters);
                steps[i] = Long.MIN_VALUE;
            }
        }

        boolean tryAcquire() {
            return taken == 0 && TAKEN.compareAndSet(this, 0, 1);
        }

        void acquireForRead() {
            while (!tryAcquire()) {
                Thread.onSpinWait();
            }
        }

        void release() {
            TAKEN.setRelease(this, 0);
        }

        /** The summary of {@code step}, cleared first when its slot last counted another step. */
        SpaceSaving summary(long step) {
            int slot = (int) Math.floorMod(step, (long) STEPS);
            if (steps[slot] != step) {
                summaries[slot].clear();
                steps[slot] = step;
            }
            return summaries[slot];
        }
    }
}
