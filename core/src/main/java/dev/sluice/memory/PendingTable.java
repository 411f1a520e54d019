package dev.sluice.memory;

import org.jspecify.annotations.Nullable;

/**
 * One stripe of {@link Reservations}: the pending reservations whose key hashes to it, a chained hash table from (key
 * hash, reservation id) to (estimate, reserved at, expires at) whose records are also a list in the order they were
 * made, oldest first. Not thread-safe: its stripe's monitor guards it.
 *
 * <p>A record is one object ({@link Pending}: 64 bytes, and the caller's id), its own hash chain link and list
 * links, where a {@code LinkedHashMap} of records took four (the map's entry, a key, a value, and a probe key at each
 * lookup). A few removed records are kept for the next reservations ({@link #SPARE}), so a stripe whose records come
 * and go allocates nothing; the rest go to the garbage collector. The bucket array grows with the records held and
 * is bounded as the table is (at most {@code maxReservations} records over all stripes).
 */
final class PendingTable {
    /** Removed records kept for reuse, at most: enough for a stripe's calls in flight at once. */
    private static final int SPARE = 8;

    private static final int INITIAL_BUCKETS = 16;

    /** A pending reservation, and its links in the table. */
    static final class Pending {
        long hash;
        /** (hash, id) spread over the buckets: see {@link #spread}. */
        int spread;

        @Nullable
        String id;

        long estimate;
        long reservedAt;
        long expiresAt;
        /** The next record in this record's bucket. */
        @Nullable
        Pending chain;
        /** The record made before this one, and the one made after. */
        @Nullable
        Pending older;

        @Nullable
        Pending newer;
    }

    private @Nullable Pending[] buckets = new Pending[INITIAL_BUCKETS];
    private int size;
    private @Nullable Pending oldest;
    private @Nullable Pending newest;
    private @Nullable Pending spare;
    private int spares;

    /** The record of (hash, id), or null. */
    @Nullable
    Pending get(long hash, String id) {
        for (Pending r = buckets[spread(hash, id) & (buckets.length - 1)]; r != null; r = r.chain) {
            if (r.hash == hash && id.equals(r.id)) {
                return r;
            }
        }
        return null;
    }

    /** Adds the record of (hash, id), newest; the caller has made sure there is none yet. */
    void add(long hash, String id, long estimate, long reservedAt, long expiresAt) {
        if (size >= buckets.length - (buckets.length >>> 2)) {
            grow();
        }
        Pending r = spare;
        if (r != null) {
            spare = r.chain;
            spares--;
        } else {
            r = new Pending();
        }
        r.hash = hash;
        r.spread = spread(hash, id);
        r.id = id;
        r.estimate = estimate;
        r.reservedAt = reservedAt;
        r.expiresAt = expiresAt;
        int b = r.spread & (buckets.length - 1);
        r.chain = buckets[b];
        buckets[b] = r;
        r.older = newest;
        r.newer = null;
        if (newest != null) {
            newest.newer = r;
        } else {
            oldest = r;
        }
        newest = r;
        size++;
    }

    /** Removes {@code r}, a record of this table; its fields are not to be read after. */
    void remove(Pending r) {
        int b = r.spread & (buckets.length - 1);
        if (buckets[b] == r) {
            buckets[b] = r.chain;
        } else {
            Pending p = buckets[b];
            while (p != null && p.chain != r) {
                p = p.chain;
            }
            if (p != null) {
                p.chain = r.chain;
            }
        }
        if (r.older != null) {
            r.older.newer = r.newer;
        } else {
            oldest = r.newer;
        }
        if (r.newer != null) {
            r.newer.older = r.older;
        } else {
            newest = r.older;
        }
        size--;
        r.id = null; // the caller's id is not kept alive by a spare
        r.older = null;
        r.newer = null;
        if (spares < SPARE) {
            r.chain = spare;
            spare = r;
            spares++;
        } else {
            r.chain = null;
        }
    }

    /** The oldest record (the first made of those held), or null when none is held. */
    @Nullable
    Pending oldest() {
        return oldest;
    }

    /** The record made after {@code r}, or null. Read it before removing {@code r}. */
    @Nullable
    static Pending newer(Pending r) {
        return r.newer;
    }

    private void grow() {
        @Nullable Pending[] old = buckets;
        @Nullable Pending[] grown = new Pending[old.length * 2];
        for (Pending head : old) {
            for (Pending r = head; r != null; ) {
                Pending next = r.chain;
                int b = r.spread & (grown.length - 1);
                r.chain = grown[b];
                grown[b] = r;
                r = next;
            }
        }
        buckets = grown;
    }

    /**
     * (hash, id) as the bits that choose a bucket (the low ones). The key hash is already uniform; its bits that chose
     * the stripe ({@code Reservations.stripeOf}) are the same for every record here, so the id's hash is mixed in to
     * tell apart the reservations of one key.
     */
    private static int spread(long hash, String id) {
        int h = (int) hash ^ (int) (hash >>> 32) ^ id.hashCode() * 0x9E3779B9;
        return h ^ h >>> 16;
    }
}
