package dev.sluice.memory;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Gcra;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The in-process store: exact, lock-free on the single-key path, and bounded in memory ({@link #maxKeys}). Keys are
 * not stored, only a keyed 64-bit hash of each (key, limit) pair and its state, in a {@code long} for the token
 * bucket, GCRA and fixed window; when more than {@code maxKeys} pairs are active at once the least informative are
 * forgotten, which can only ever be generous to the forgotten key. {@link MemoryStore} describes the design.
 *
 * <p>This class is the facade: the builder, the argument checks, and the keyed calls' shortcut for the keys they meet
 * most ({@link HotKeys}), each kept as a {@link #bind bound handle}.
 */
public final class InMemoryRateLimiter implements RateLimiter {

    /** Default bound on tracked (key, limit) pairs: 2^20 (bench/README.md gives the bytes a tracked key costs). */
    public static final int DEFAULT_MAX_KEYS = 1 << 20;
    /** Distinct limits one limiter can track; limits are meant to be created once and reused. */
    public static final int MAX_LIMITS = LimitRegistry.MAX_LIMITS;
    /**
     * Default bound on reservations pending at once ({@link #tryAcquireEstimate}): 2^17, about 150 bytes each with a
     * UUID for id (20 MB when full).
     */
    public static final int DEFAULT_MAX_RESERVATIONS = 1 << 17;

    final MemoryStore store;
    /** The handles of the keys the keyed calls meet most: see {@link HotKeys}. */
    final HotKeys hotKeys = new HotKeys();

    private final int maxKeys;
    private final InMemoryInFlight inFlight;
    private final Reservations reservations;

    private InMemoryRateLimiter(Builder b) {
        this.maxKeys = b.maxKeys;
        this.store = new MemoryStore(b.ticker, b.maxKeys);
        this.inFlight = new InMemoryInFlight(b.ticker, b.maxKeys);
        this.reservations = new Reservations(store, b.maxReservations);
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
        private int maxReservations = DEFAULT_MAX_RESERVATIONS;

        private Builder() {}

        /** Where time comes from (epoch nanoseconds); tests pass a {@link dev.sluice.ManualTicker}. */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker must not be null: use Ticker.system()");
            return this;
        }

        /**
         * The most (key, limit) pairs tracked at once; beyond it the least informative are evicted. Also the most
         * slots {@link #inFlight() in flight} held at once over all keys.
         */
        public Builder maxKeys(int maxKeys) {
            if (maxKeys < 1) {
                throw new IllegalArgumentException("maxKeys " + maxKeys + " must be at least 1");
            }
            this.maxKeys = maxKeys;
            return this;
        }

        /**
         * The most reservations pending at once ({@link InMemoryRateLimiter#tryAcquireEstimate}); when that many are
         * pending and none has expired, a further reservation takes nothing and throws a {@link
         * dev.sluice.StoreException} with {@link dev.sluice.Degradation#OVERLOADED}.
         */
        public Builder maxReservations(int maxReservations) {
            if (maxReservations < 1) {
                throw new IllegalArgumentException("maxReservations " + maxReservations + " must be at least 1");
            }
            this.maxReservations = maxReservations;
            return this;
        }

        public InMemoryRateLimiter build() {
            return new InMemoryRateLimiter(this);
        }
    }

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        MemoryBound kept = hotKeys.get(key, limit);
        if (kept != null) {
            return kept.tryAcquire(cost);
        }
        RegisteredLimit r = store.register(limit);
        long h = store.hash(key, r);
        if (HotKeys.admit(key)) {
            MemoryBound b = new MemoryBound(this, store, key, limit, BoundLimit.Sleeper.PARK, r, h);
            hotKeys.put(b);
            return b.tryAcquire(cost);
        }
        return store.acquire(h, r, cost, -1);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        return CompletableFuture.completedFuture(tryAcquire(key, limit, cost));
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        long maxWaitNanos = Algorithms.checkReserve(key, limit, cost, maxWait);
        return store.acquire(key, limit, cost, Gcra.maxWaitScaled(maxWaitNanos, limit));
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        Permit.checkAll(permits);
        return store.acquireAll(permits);
    }

    /** One all-or-nothing step, with each permit's own decision (see {@link PermitDecisions}); completes at once. */
    @Override
    public PermitDecisions tryAcquireEach(List<Permit> permits) {
        Permit.checkAll(permits);
        if (permits.size() == 1) { // the keyed call's path (its hot keys' handles)
            Permit p = permits.get(0);
            return PermitDecisions.of(tryAcquire(p.key(), p.limit(), p.cost()));
        }
        return store.acquireEach(permits);
    }

    @Override
    public CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
        return CompletableFuture.completedFuture(tryAcquireEach(permits));
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        return store.peek(key, limit, cost);
    }

    @Override
    public void reset(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit);
        store.reset(key, limit);
    }

    /**
     * Decides as {@link #tryAcquire(String, Limit, long)} and, when allowed, keeps the reservation pending until it is
     * settled or {@code settleWithin} has passed by this limiter's ticker; at most {@link Builder#maxReservations} are
     * kept at once (see {@link Reservations}).
     */
    @Override
    public Decision tryAcquireEstimate(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        return reservations.tryAcquireEstimate(key, limit, estimate, reservation, settleWithin);
    }

    @Override
    public Settlement settle(String key, Limit limit, String reservation, long actual) {
        return reservations.settle(key, limit, reservation, actual);
    }

    /** How many reservations are kept now: pending, or expired and not dropped yet. */
    public int pendingReservations() {
        return reservations.size();
    }

    /** The key's hash, limit and segment resolved once, and its slot remembered: see {@link BoundLimit}. */
    @Override
    public BoundLimit bind(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit); // before the limit is registered
        RegisteredLimit r = store.register(limit);
        return new MemoryBound(this, store, key, limit, BoundLimit.Sleeper.PARK, r, store.hash(key, r));
    }

    /**
     * Work in flight on this limiter's ticker, at most {@link #maxKeys} slots held at once over all keys (see {@link
     * InMemoryInFlight}).
     */
    @Override
    public InFlightLimiter inFlight() {
        return inFlight;
    }

    /** Holds no threads or connections: nothing to release. */
    @Override
    public void close() {}

    /** How many (key, limit) pairs are tracked now. */
    public int trackedKeys() {
        return store.trackedKeys();
    }

    /** The bound given to the builder. */
    public int maxKeys() {
        return maxKeys;
    }

    /** The clock this limiter decides by. */
    public Ticker ticker() {
        return store.ticker();
    }
}
