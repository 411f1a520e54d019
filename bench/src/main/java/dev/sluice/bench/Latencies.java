package dev.sluice.bench;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * Decision latencies of a load run: a log-linear histogram (each power of two split into 32 sub-buckets, so
 * a percentile is read to within about 3 %), safe to record into from many threads, with the exact maximum
 * kept aside. Every load and fault benchmark reports its percentiles through this one class, so their figures
 * mean the same thing.
 */
public final class Latencies {

    private static final int SUB_BITS = 5;
    private static final int SUB = 1 << SUB_BITS;
    private static final int BUCKETS = 64 * SUB;

    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    private final LongAdder total = new LongAdder();
    private final LongAccumulator max = new LongAccumulator(Math::max, 0);

    /** Records one call that took {@code nanos}. */
    public void record(long nanos) {
        long v = Math.max(0, nanos);
        counts.incrementAndGet(bucket(v));
        total.increment();
        max.accumulate(v);
    }

    public long count() {
        return total.sum();
    }

    /** The exact longest call recorded, in nanoseconds. */
    public long maxNanos() {
        return max.get();
    }

    /**
     * The latency (nanoseconds, the upper edge of its bucket, never above the maximum) under which a share
     * {@code p} (0..1) of the calls fell; {@code p = 1} is the exact maximum.
     */
    public long percentileNanos(double p) {
        long n = count();
        if (n == 0) {
            return 0;
        }
        if (p >= 1) {
            return maxNanos();
        }
        long rank = (long) Math.ceil(p * n);
        long seen = 0;
        for (int b = 0; b < BUCKETS; b++) {
            seen += counts.get(b);
            if (seen >= rank) {
                return Math.min(upperEdge(b), maxNanos());
            }
        }
        return maxNanos();
    }

    /** {@code p50 0.41 ms, p99 1.20 ms, p99.9 2.31 ms, max 7.80 ms (n=123456)}. */
    public String summary() {
        return String.format(
                "p50 %s, p99 %s, p99.9 %s, max %s (n=%d)",
                ms(percentileNanos(0.50)),
                ms(percentileNanos(0.99)),
                ms(percentileNanos(0.999)),
                ms(maxNanos()),
                count());
    }

    /** Milliseconds with two decimals. */
    public static String ms(long nanos) {
        return String.format("%.2f ms", nanos / 1e6);
    }

    private static int bucket(long v) {
        if (v < SUB) {
            return (int) v;
        }
        int exp = 63 - Long.numberOfLeadingZeros(v); // >= SUB_BITS
        int sub = (int) (v >>> (exp - SUB_BITS)) & (SUB - 1);
        return (exp - SUB_BITS + 1) * SUB + sub;
    }

    private static long upperEdge(int b) {
        if (b < SUB) {
            return b;
        }
        int exp = b / SUB + SUB_BITS - 1;
        long sub = b % SUB;
        return ((SUB + sub + 1) << (exp - SUB_BITS)) - 1;
    }
}
