package dev.sluice.lease;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.Ticker;
import dev.sluice.failsafe.StoreHealth;
import dev.sluice.store.Futures;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Exact local leases over a shared store: a hot key is decided here, at in-memory speed, from permits this node
 * has already taken from the shared state, so a fleet of nodes on one Redis or PostgreSQL makes one store call per
 * many decisions instead of one each, and <b>never admits more than one shared limiter would</b>.
 *
 * <p>How: when a key's held permits do not cover a call, the call goes to the store asking for its cost plus
 * {@code extra} more (one {@code tryAcquire}); the extra permits are held here and later calls spend them without
 * the store. {@code extra} is the key's demand here over the last {@link Builder#horizon(Duration) horizon} (0 for
 * a cold key: its call is exactly one plain store call), at most {@link Builder#maxLease(long) maxLease} less what is
 * held here and under way, an eighth of the limit's capacity and (token bucket, GCRA) what the limit refills in one
 * horizon, and it grows only while takes are granted. When fewer than half of the last take are left, the next take
 * is asked ahead, asynchronously, while callers go on spending; no caller waits for another's take (with nothing
 * held, it asks for its cost alone).
 * No monitor is held across a store call. A held permit is spent only while one shared limiter would still admit it
 * (see {@link Lease}: a token-bucket or GCRA permit expires when its place in the shared schedule has come, a
 * fixed-window permit at the end of its window), so every local admission is one the shared state allowed. A denial
 * is remembered and repeated without the store until the store's retry time (from the sending instant, when the
 * store certainly still denies), with a {@code retryAfter} counted from the receiving instant, so never earlier than
 * the store's; a denied take with extra permits (token bucket, GCRA) is remembered for every cost until the store
 * has all of them (at most a horizon's refill; what this leaves in the store stays there for any node); a fixed
 * window short of the extra is asked again for the cost alone.
 *
 * <p><b>What it costs: under-admission, bounded.</b> A node holds at most {@code maxLease} permits of a key at any
 * instant, takes under way included; no other node can use them, and one not spent before it expires is lost (the
 * shared state counts it as admitted). A held permit lives at most until its place in the shared schedule comes (token
 * bucket, GCRA: at most the time the limit takes to refill what is held) or its window ends (fixed window). Unspent
 * permits are not given back to the store: they expire (giving back is only exact under conditions a store would have
 * to check; not built). A node that crashes loses what it held, within the same bound.
 *
 * <p>Token bucket, GCRA and fixed window are leased; sliding window, sliding log, multi-permit calls, reserve, peek,
 * reset and costs known afterwards ({@code tryAcquireEstimate}, {@code settle}) go to the store unchanged (a reset also forgets this node's lease of that key, not other nodes'). A
 * decision the store made degraded ({@link Decision#degraded()}, e.g. under a {@code FailSafeRateLimiter}) takes
 * nothing and is returned as it is. A local admission's {@code remaining} is an estimate (the store's remaining at
 * the last take plus what is held here). {@link #storeHealth()} is the health of the store's failure policy, if it has
 * one: leases change how often the store is asked, not whether it answers.
 *
 * <pre>{@code
 * RateLimiter limiter = LeasedRateLimiter.builder(RedisRateLimiter.create("redis://localhost:6379")).build();
 * }</pre>
 */
public final class LeasedRateLimiter implements RateLimiter, StoreHealth.Source {

    /** By default a lease is sized to the demand of this long. */
    public static final Duration DEFAULT_HORIZON = Duration.ofMillis(20);
    /** By default a node holds at most this many permits of one key. */
    public static final long DEFAULT_MAX_LEASE = 1024;
    /** By default at most this many keys have a lease at once; more keys take the plain path. */
    public static final int DEFAULT_MAX_KEYS = 100_000;

    private final RateLimiter store;
    private final Ticker ticker;
    private final LeaseTable leases;
    private final LeaseTakes takes;

    private LeasedRateLimiter(Builder b) {
        this.store = b.store;
        this.ticker = b.ticker;
        long horizonNanos = b.horizon.toNanos();
        this.leases = new LeaseTable(b.ticker, horizonNanos, b.maxKeys);
        this.takes = new LeaseTakes(store, ticker, horizonNanos, b.maxLease);
    }

    /** Leases over {@code store} with the defaults. */
    public static LeasedRateLimiter over(RateLimiter store) {
        return builder(store).build();
    }

    /**
     * The shared store these leases are taken from, for a caller that needs the store's own count in every answer
     * (envoy's counting in {@code sluice serve}); deciding through it bypasses the leases.
     */
    public RateLimiter store() {
        return store;
    }

    /** The health of the store these leases are taken from, as its failure policy reports it (empty without one). */
    @Override
    public Optional<StoreHealth> storeHealth() {
        return StoreHealth.of(store);
    }

    /** A builder for leases over {@code store} (closed with this limiter). */
    public static Builder builder(RateLimiter store) {
        return new Builder(store);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Decided here, synchronously and without a future, when the key's held permits (or a remembered denial)
     * cover it; else the caller waits for the {@linkplain #tryAcquireAsync take}, which is written once, for both
     * views.
     */
    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        Lease lease = Lease.leasable(limit) ? leases.lease(key, limit) : null;
        if (lease == null) {
            return counted(store.tryAcquire(key, limit, cost)); // the plain path: the store's own call
        }
        LeaseTakes.Start start = takes.start(lease, key, limit, cost);
        Decision local = start.local();
        return local != null ? local : Futures.join(takes.take(lease, key, limit, cost, start));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Decided here when the key's held permits cover it (the future is complete at once); else the store's call,
     * made asynchronously (concurrent calls on a key without held permits may each call the store, for their cost
     * alone).
     */
    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        Lease lease = Lease.leasable(limit) ? leases.lease(key, limit) : null;
        if (lease == null) {
            return counted(store.tryAcquireAsync(key, limit, cost));
        }
        LeaseTakes.Start start = takes.start(lease, key, limit, cost);
        Decision local = start.local();
        return local != null ? CompletableFuture.completedFuture(local) : takes.take(lease, key, limit, cost, start);
    }

    private <T> T counted(T d) {
        return takes.counted(d);
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        return counted(store.tryAcquire(permits));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
        return counted(store.tryAcquireAsync(permits));
    }

    @Override
    public PermitDecisions tryAcquireEach(List<Permit> permits) {
        return Futures.join(tryAcquireEachAsync(permits));
    }

    /** One permit takes the leased path ({@link #tryAcquireAsync(String, Limit, long)}); several the store's call. */
    @Override
    public CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
        return permits.size() == 1
                ? RateLimiter.super.tryAcquireEachAsync(permits)
                : counted(store.tryAcquireEachAsync(permits));
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        return counted(store.reserve(key, limit, cost, maxWait));
    }

    @Override
    public CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
        return counted(store.reserveAsync(key, limit, cost, maxWait));
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        return counted(store.peek(key, limit, cost));
    }

    @Override
    public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        return counted(store.peekAsync(key, limit, cost));
    }

    @Override
    public Decision tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return counted(store.tryAcquireEstimate(key, limit, estimate, id, settleWithin));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return counted(store.tryAcquireEstimateAsync(key, limit, estimate, id, settleWithin));
    }

    @Override
    public Settlement settle(String key, Limit limit, String id, long actual) {
        return counted(store.settle(key, limit, id, actual));
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String id, long actual) {
        return counted(store.settleAsync(key, limit, id, actual));
    }

    /** Resets the key in the store, then forgets this node's lease of it (other nodes' leases stay). */
    @Override
    public void reset(String key, Limit limit) {
        Futures.join(resetAsync(key, limit));
    }

    @Override
    public CompletableFuture<Void> resetAsync(String key, Limit limit) {
        return store.resetAsync(key, limit).thenRun(() -> {
            Lease l = leases.existing(key, limit);
            if (l != null) {
                synchronized (l) {
                    l.clear();
                }
            }
        });
    }

    /** Store calls made so far (takes, takes ahead, denials asked again, and every call of the plain path). */
    public long storeCalls() {
        return takes.storeCalls.get();
    }

    /** Decisions made here from held permits or a remembered denial, without the store. */
    public long localDecisions() {
        return takes.localDecisions.get();
    }

    /** Permits of {@code key} under {@code limit} held here now (0 when none). */
    public long held(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit);
        return leases.held(key, limit, ticker.read());
    }

    /** Closes the store. What is held is not given back (it expires; see the class comment). */
    @Override
    public void close() {
        leases.clear();
        store.close();
    }

    @Override
    public String toString() {
        return "LeasedRateLimiter[" + store + "]";
    }

    /** Options for a {@link LeasedRateLimiter}. */
    public static final class Builder {
        private final RateLimiter store;
        private Ticker ticker = Ticker.system();
        private Duration horizon = DEFAULT_HORIZON;
        private long maxLease = DEFAULT_MAX_LEASE;
        private int maxKeys = DEFAULT_MAX_KEYS;

        private Builder(RateLimiter store) {
            this.store = Objects.requireNonNull(store, "store must not be null: e.g. RedisRateLimiter.create(uri)");
        }

        /**
         * This node's clock, for the expiry of held permits (default {@link Ticker#system()}). It must advance at the
         * store's rate (any monotonic clock does; its offset does not matter). Tests give the store's ticker.
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
            return this;
        }

        /**
         * How much of a key's demand here one take covers (default 20 ms): a longer horizon means fewer store calls
         * and more permits held per node (more possible under-admission).
         */
        public Builder horizon(Duration horizon) {
            Objects.requireNonNull(horizon, "horizon must not be null: e.g. Duration.ofMillis(20)");
            if (horizon.isNegative() || horizon.isZero() || horizon.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new IllegalArgumentException("horizon " + horizon + " must be positive and at most a minute,"
                        + " e.g. Duration.ofMillis(20)");
            }
            this.horizon = horizon;
            return this;
        }

        /**
         * The most permits of one key this node holds (default 1024): a node holds at most {@code maxLease} permits
         * of a key at any instant, takes under way included. 0 turns leasing off (remembered denials remain).
         */
        public Builder maxLease(long maxLease) {
            if (maxLease < 0 || maxLease > 1L << 40) {
                throw new IllegalArgumentException("maxLease " + maxLease + " must be between 0 and 2^40, e.g. 1024");
            }
            this.maxLease = maxLease;
            return this;
        }

        /** The most keys with a lease at once (default 100,000); past it, idle leases are dropped, else new keys go plain. */
        public Builder maxKeys(int maxKeys) {
            if (maxKeys < 1) {
                throw new IllegalArgumentException("maxKeys " + maxKeys + " must be at least 1, e.g. 100000");
            }
            this.maxKeys = maxKeys;
            return this;
        }

        public LeasedRateLimiter build() {
            return new LeasedRateLimiter(this);
        }
    }
}
