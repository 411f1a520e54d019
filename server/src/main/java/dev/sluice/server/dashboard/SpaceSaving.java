package dev.sluice.server.dashboard;

import java.util.Arrays;

/**
 * Space-Saving (Metwally, Agrawal, El Abbadi, "Efficient computation of frequent and top-k elements in data streams",
 * 2005): the most frequent keys of a stream in a fixed number of counters, whatever the number of distinct keys.
 *
 * <p>Each of the {@code k} counters holds a key, its count and its error. A key already counted gets {@code +1}. A
 * new key takes a free counter with count 1, or, when all are taken, the counter with the <em>smallest</em> count
 * {@code m}: the old key is forgotten, the new one gets {@code m + 1} and error {@code m} (it may have been seen up
 * to {@code m} times while untracked). So every counter overestimates by at most its error ({@code count - error
 * ≤ true count ≤ count}), the counts always add up to the stream's length, every key seen more than {@code n / k}
 * times in {@code n} is certainly kept, and a key counted above the smallest count is never evicted.
 *
 * <p>The smallest counter is found in O(1) with the paper's <em>stream summary</em>: counters hang in buckets of
 * equal count, the buckets in a list by ascending count; {@code +1} moves a counter to the next bucket (created if
 * its count is missing). Here it is laid out on primitive arrays (counters and buckets by index, an open-addressing
 * index from key to counter), so an offer allocates nothing. Not thread-safe: {@link DeniedKeys} confines each
 * summary to one thread at a time.
 */
final class SpaceSaving {
    private static final int NONE = -1;

    private final int capacity;
    // counters, by index 0 … size-1
    private final String[] keys;
    private final int[] hashes;
    private final long[] errors;
    private final int[] bucketOf;
    private final int[] nextInBucket;
    private final int[] prevInBucket;
    // buckets: a count shared by their counters; in use, a list by ascending count; free, a list through nextBucket
    private final long[] bucketCount;
    private final int[] firstCounter;
    private final int[] nextBucket;
    private final int[] prevBucket;
    /** Linear probing, at most half full: counter index + 1, 0 for an empty slot. */
    private final int[] index;

    private final int indexMask;

    private int size;
    private int smallest = NONE;
    private int freeBuckets;
    private long total;

    SpaceSaving(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity + " must be at least 1");
        }
        this.capacity = capacity;
        keys = new String[capacity];
        hashes = new int[capacity];
        errors = new long[capacity];
        bucketOf = new int[capacity];
        nextInBucket = new int[capacity];
        prevInBucket = new int[capacity];
        bucketCount = new long[capacity];
        firstCounter = new int[capacity];
        nextBucket = new int[capacity];
        prevBucket = new int[capacity];
        index = new int[Integer.highestOneBit(capacity) << 2]; // ≥ 2 × capacity: probes stay short
        indexMask = index.length - 1;
        clear();
    }

    /** Forgets everything: O(capacity). */
    void clear() {
        Arrays.fill(keys, 0, size, null); // let the key strings go
        Arrays.fill(index, 0);
        for (int b = 0; b < capacity; b++) {
            nextBucket[b] = b + 1 < capacity ? b + 1 : NONE;
        }
        freeBuckets = 0;
        smallest = NONE;
        size = 0;
        total = 0;
    }

    /** Counts one occurrence of {@code key}: O(1) (one probe sequence, a few array writes), no allocation. */
    void offer(String key) {
        int h = spread(key.hashCode());
        total++;
        for (int slot = h & indexMask; ; slot = (slot + 1) & indexMask) {
            int c = index[slot] - 1;
            if (c < 0) {
                break;
            }
            if (hashes[c] == h && keys[c].equals(key)) {
                increment(c);
                return;
            }
        }
        if (size < capacity) {
            int c = size++;
            keys[c] = key;
            hashes[c] = h;
            errors[c] = 0;
            insert(c);
            if (smallest != NONE && bucketCount[smallest] == 1) {
                push(c, smallest);
            } else {
                int b = allocateBucket();
                bucketCount[b] = 1;
                prevBucket[b] = NONE;
                nextBucket[b] = smallest;
                if (smallest != NONE) {
                    prevBucket[smallest] = b;
                }
                smallest = b;
                push(c, b);
            }
            return;
        }
        // full: the new key takes over a counter with the smallest count m, with error m
        int c = firstCounter[smallest];
        remove(c);
        keys[c] = key;
        hashes[c] = h;
        errors[c] = bucketCount[smallest];
        insert(c);
        increment(c);
    }

    /** +1 on counter {@code c}: to the bucket of the next count, created after its own when missing. */
    private void increment(int c) {
        int b = bucketOf[c];
        long next = bucketCount[b] + 1;
        int nb = nextBucket[b];
        boolean alone = firstCounter[b] == c && nextInBucket[c] == NONE;
        if (alone && (nb == NONE || bucketCount[nb] != next)) {
            bucketCount[b] = next; // still below the next bucket's count: the order holds
            return;
        }
        unlink(c, b);
        if (nb != NONE && bucketCount[nb] == next) {
            push(c, nb);
        } else {
            int n = allocateBucket();
            bucketCount[n] = next;
            prevBucket[n] = b;
            nextBucket[n] = nb;
            nextBucket[b] = n;
            if (nb != NONE) {
                prevBucket[nb] = n;
            }
            push(c, n);
        }
        if (firstCounter[b] == NONE) {
            freeBucket(b);
        }
    }

    private int allocateBucket() {
        int b = freeBuckets;
        freeBuckets = nextBucket[b];
        firstCounter[b] = NONE;
        return b;
    }

    private void freeBucket(int b) {
        int p = prevBucket[b];
        int n = nextBucket[b];
        if (p == NONE) {
            smallest = n;
        } else {
            nextBucket[p] = n;
        }
        if (n != NONE) {
            prevBucket[n] = p;
        }
        nextBucket[b] = freeBuckets;
        freeBuckets = b;
    }

    private void push(int c, int b) {
        int first = firstCounter[b];
        prevInBucket[c] = NONE;
        nextInBucket[c] = first;
        if (first != NONE) {
            prevInBucket[first] = c;
        }
        firstCounter[b] = c;
        bucketOf[c] = b;
    }

    private void unlink(int c, int b) {
        int p = prevInBucket[c];
        int n = nextInBucket[c];
        if (p == NONE) {
            firstCounter[b] = n;
        } else {
            nextInBucket[p] = n;
        }
        if (n != NONE) {
            prevInBucket[n] = p;
        }
    }

    private void insert(int c) {
        int slot = hashes[c] & indexMask;
        while (index[slot] != 0) {
            slot = (slot + 1) & indexMask;
        }
        index[slot] = c + 1;
    }

    /** Takes counter {@code c} out of the index, shifting back the entries behind it (no tombstones). */
    private void remove(int c) {
        int i = hashes[c] & indexMask;
        while (index[i] != c + 1) {
            i = (i + 1) & indexMask;
        }
        for (int j = i; ; ) {
            index[i] = 0;
            int entry;
            do {
                j = (j + 1) & indexMask;
                entry = index[j];
                if (entry == 0) {
                    return;
                }
                int home = hashes[entry - 1] & indexMask;
                // the entry at j may stay unless its home lies cyclically outside (i, j]
                if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) {
                    continue;
                }
                break;
            } while (true);
            index[i] = entry;
            i = j;
        }
    }

    private static int spread(int h) {
        int x = h * 0x9E3779B9;
        return x ^ (x >>> 16);
    }

    /** What one counter says. */
    interface Visitor {
        void counter(String key, long count, long error);
    }

    /** Every counter in use, in no particular order. */
    void forEach(Visitor v) {
        for (int c = 0; c < size; c++) {
            v.counter(keys[c], bucketCount[bucketOf[c]], errors[c]);
        }
    }

    /** The occurrences offered since the last {@link #clear()}: the sum of the counts. */
    long total() {
        return total;
    }

    /**
     * The most an untracked key may have been seen: the smallest count when every counter is taken, else 0 (a key
     * not tracked then was never offered).
     */
    long untrackedBound() {
        return size < capacity || smallest == NONE ? 0 : bucketCount[smallest];
    }

    int size() {
        return size;
    }

    int capacity() {
        return capacity;
    }
}
