package dev.sluice;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A limit: which algorithm, how many permits, over what time. Immutable and cheap to compare.
 *
 * <h2>Identity: whose state a limit reads</h2>
 * State is kept per (key, {@link #identity()}). An unnamed limit's identity is its numbers (algorithm, capacity,
 * reduced rate: {@link #id()}), so two unnamed limits that differ in a number are two independent buckets for the
 * same key. A limit given a {@link #named(String) name} has the identity (name, algorithm): its numbers are not part
 * of it, so a changed capacity, rate or window under the same name reads the state the key already has under the
 * new numbers (a rule reloaded, a property refreshed, code passing a new {@code Limit}), as
 * {@link dev.sluice.algorithm.Inheritance} says per algorithm: what was spent carries over, so tightening a limit
 * never hands out a fresh burst and loosening it never takes back more than was spent. A name under another
 * algorithm is another identity (fresh state). To start fresh, {@code reset} the key or use a new name.
 *
 * <p>{@link #equals(Object)} compares the name and the numbers (two equal limits keep the same state and decide the
 * same way) and compares rates by value: {@code 2 per 2 s} and {@code 1 per 1 s} are the same refill.
 *
 * <h2>Exact time arithmetic</h2>
 * For the token bucket and GCRA the emission interval {@code T = period / permits} is rarely a whole
 * number of nanoseconds (3 per second is 333,333,333⅓ ns). Sluice therefore measures bucket time in
 * units of {@code 1 / timeScale()} ns, where {@code timeScale() = permits / gcd(permits, periodNanos)}:
 * in those units {@code T} is the integer {@link #intervalScaled()} and the whole bucket is the integer
 * {@link #capacityScaled()}. Nothing is rounded until a {@link Decision} reports a duration, and then
 * only upwards (never early). To keep that arithmetic in a {@code long}, {@code capacityScaled()} may
 * not exceed {@link #MAX_SCALED}.
 */
public final class Limit {

    /** Upper bound of {@code capacity × intervalScaled} for the token bucket and GCRA: 2^62. */
    public static final long MAX_SCALED = 1L << 62;
    /** Largest permit count of a fixed or sliding window. */
    public static final long MAX_WINDOW_PERMITS = Integer.MAX_VALUE;
    /** Largest permit count of a sliding log, whose memory grows with the permits it logs. */
    public static final long MAX_SLIDING_LOG_PERMITS = 10_000;

    private final Algorithm algorithm;
    private final long capacity;
    private final Rate rate;
    private final @Nullable String name;
    // derived, for the stores' arithmetic
    private final long timeScale;
    private final long intervalScaled;
    private final long capacityScaled;
    private final long periodNanos;
    private final String id;
    private final String identity;
    private final int hash;

    private Limit(Algorithm algorithm, long capacity, Rate rate, @Nullable String name) {
        this.algorithm = algorithm;
        this.capacity = capacity;
        this.rate = rate;
        this.name = name;
        this.periodNanos = rate.periodNanos();
        long g = gcd(rate.permits(), periodNanos);
        this.timeScale = rate.permits() / g;
        this.intervalScaled = periodNanos / g;
        if (algorithm.isTat()) {
            long hi = Math.multiplyHigh(capacity, intervalScaled);
            long lo = capacity * intervalScaled;
            if (hi != 0 || lo < 0 || lo > MAX_SCALED) {
                throw new IllegalArgumentException("capacity " + capacity + " with rate " + rate
                        + " is too large to compute exactly (capacity × period/permits exceeds 2^62 units of 1/"
                        + timeScale + " ns): use a smaller capacity or a rate whose permits divide its period");
            }
            this.capacityScaled = lo;
            this.id = algorithm.shortName() + ':' + capacity + ':' + timeScale + ':' + intervalScaled;
        } else {
            this.capacityScaled = 0;
            this.id = algorithm.shortName() + ':' + capacity + ':' + periodNanos;
        }
        this.identity = name == null ? id : algorithm.shortName() + '@' + name;
        this.hash = 31 * id.hashCode() + (name == null ? 0 : name.hashCode());
    }

    /**
     * A token bucket holding at most {@code capacity} tokens, refilled continuously at {@code refill}.
     * A new key starts full; a call for {@code cost} tokens is allowed iff that many are there.
     */
    public static Limit tokenBucket(long capacity, Rate refill) {
        Objects.requireNonNull(refill, "refill rate must not be null: e.g. Rate.perSecond(10)");
        checkCapacity("capacity", capacity, Long.MAX_VALUE);
        return new Limit(Algorithm.TOKEN_BUCKET, capacity, refill, null);
    }

    /**
     * GCRA ("leaky bucket as a meter"): one theoretical arrival time per key. {@code burst} is how many
     * may pass at once when the key is idle; with {@code burst == capacity} it decides exactly like
     * {@link #tokenBucket(long, Rate)} at the same rate.
     */
    public static Limit gcra(Rate rate, long burst) {
        Objects.requireNonNull(rate, "rate must not be null: e.g. Rate.perSecond(10)");
        checkCapacity("burst", burst, Long.MAX_VALUE);
        return new Limit(Algorithm.GCRA, burst, rate, null);
    }

    /** At most {@code permits} per window; windows are aligned to the Unix epoch. */
    public static Limit fixedWindow(long permits, Duration window) {
        return window(Algorithm.FIXED_WINDOW, permits, window, MAX_WINDOW_PERMITS);
    }

    /** The two-window weighted counter: a smooth approximation of a trailing window, O(1) state. */
    public static Limit slidingWindow(long permits, Duration window) {
        return window(Algorithm.SLIDING_WINDOW, permits, window, MAX_WINDOW_PERMITS);
    }

    /** Exact trailing window: every admission is logged, so memory grows with {@code permits}. */
    public static Limit slidingLog(long permits, Duration window) {
        return window(Algorithm.SLIDING_LOG, permits, window, MAX_SLIDING_LOG_PERMITS);
    }

    private static Limit window(Algorithm algorithm, long permits, Duration window, long max) {
        Objects.requireNonNull(window, "window must not be null: give a Duration of at least 1 ms");
        checkCapacity("permits", permits, max);
        Rate.checkDuration("window", window);
        return new Limit(algorithm, permits, Rate.of(permits, window), null);
    }

    private static void checkCapacity(String what, long value, long max) {
        if (value < 1) {
            throw new IllegalArgumentException(what + " " + value + " must be at least 1");
        }
        if (value > max) {
            throw new IllegalArgumentException(what + " " + value + " exceeds the maximum " + max
                    + (max == MAX_SLIDING_LOG_PERMITS
                            ? " for a sliding log (its memory grows with permits): use slidingWindow for larger limits"
                            : ": use a smaller value"));
        }
    }

    /**
     * The same numbers under a name, which is then the limit's identity (with its algorithm): state is kept per
     * (key, name, algorithm), whatever the numbers, and the name labels the limit in messages, logs and metrics.
     * Null or empty: unnamed, identified by its numbers (see the class comment).
     */
    public Limit named(@Nullable String label) {
        if (label != null && label.isEmpty()) {
            label = null;
        }
        return new Limit(algorithm, capacity, rate, label);
    }

    public Algorithm algorithm() {
        return algorithm;
    }

    /** Bucket capacity, GCRA burst, or the window's permits. */
    public long capacity() {
        return capacity;
    }

    /** The refill rate (token bucket, GCRA) or {@code capacity per window} (window algorithms). */
    public Rate rate() {
        return rate;
    }

    /** The window (window algorithms) or the rate's period. */
    public Duration window() {
        return rate.period();
    }

    /** The period of {@link #rate()} (the window, for window algorithms) in nanoseconds. */
    public long periodNanos() {
        return periodNanos;
    }

    /** The name given with {@link #named(String)}, or null. */
    public @Nullable String name() {
        return name;
    }

    /** Bucket time is counted in units of {@code 1/timeScale()} ns (see the class comment). */
    public long timeScale() {
        return timeScale;
    }

    /** The emission interval in units of {@code 1/timeScale()} ns: exactly {@code period/permits}. */
    public long intervalScaled() {
        return intervalScaled;
    }

    /** {@code capacity × intervalScaled()}: how far ahead of now a full backlog reaches (token bucket, GCRA). */
    public long capacityScaled() {
        return capacityScaled;
    }

    /**
     * The numbers, canonical and compact, such as {@code tb:10:1:1000000000} (algorithm, capacity, reduced rate)
     * or {@code fw:100:60000000000} (algorithm, permits, window ns): what every store agrees "the same numbers" are.
     * It is an unnamed limit's {@link #identity()}; a store writes it beside the state, so that a call with other
     * numbers under the same identity knows what the state was written under.
     */
    public String id() {
        return id;
    }

    /**
     * Whose state this limit reads and writes: {@link #id()} for an unnamed limit, {@code <algorithm>@<name>} (such as
     * {@code tb@api-default}) for a named one. Stores key their state by it; the numbers it was written under travel
     * beside it, so that a call with other numbers under the same identity reads that state under its own numbers.
     */
    public String identity() {
        return identity;
    }

    /** True iff the two limits keep one state per key: the same {@link #identity()}, the numbers aside. */
    public boolean sameIdentity(Limit other) {
        return identity.equals(other.identity);
    }

    /**
     * Checks a request before any state changes: {@code cost} must be at least 1 and at most the capacity
     * (a cost above capacity could never be granted).
     */
    public void checkCost(long cost) {
        if (cost == 1) {
            return; // the usual cost always fits (capacity ≥ 1): nothing to load for it
        }
        if (cost < 1) {
            throw new IllegalArgumentException("cost " + cost + " must be at least 1: a call spends 1 or more permits");
        }
        if (cost > capacity) {
            throw new IllegalArgumentException("cost " + cost + " exceeds capacity " + capacity + " of limit "
                    + describe() + ": it can never be granted; raise the capacity or lower the cost");
        }
    }

    /** {@code 'name'} when named, else the readable form. */
    public String describe() {
        return name != null ? "'" + name + "'" : toString();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        return o instanceof Limit other
                && hash == other.hash
                && id.equals(other.id)
                && Objects.equals(name, other.name);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        String base = switch (algorithm) {
            case TOKEN_BUCKET -> "tokenBucket(" + capacity + ", " + rate + ")";
            case GCRA -> "gcra(" + rate + ", burst " + capacity + ")";
            default -> algorithm.configName() + "(" + capacity + " per " + formatDuration(rate.period()) + ")";
        };
        return name == null ? base : name + "=" + base;
    }

    static String formatDuration(Duration d) {
        long n = d.toNanos();
        if (n % 3_600_000_000_000L == 0) {
            return n / 3_600_000_000_000L + "h";
        }
        if (n % 60_000_000_000L == 0) {
            return n / 60_000_000_000L + "m";
        }
        if (n % 1_000_000_000L == 0) {
            return n / 1_000_000_000L + "s";
        }
        if (n % 1_000_000L == 0) {
            return n / 1_000_000L + "ms";
        }
        return n + "ns";
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
