package dev.sluice.failsafe;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.store.Futures;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A remote store behind a {@link FailurePolicy}: when the store cannot decide, the policy does, and the
 * {@link Decision} says so ({@link Decision#degradation()}).
 *
 * <p><b>Time.</b> Each remote store bounds every call by its own time budget (connection acquisition,
 * retries and the command included) and fails with a {@link StoreException} when it runs out; this class adds
 * no waiting of its own. A caller therefore waits at most the store's budget plus its documented slack, and
 * not even that while the store is known to be unhealthy.
 *
 * <p><b>Circuit.</b> After {@value Circuit#FAILURES_TO_OPEN} consecutive calls fail with a cause that puts the
 * store's health in doubt ({@link Degradation#storeUnhealthy()}; a misconfiguration at once), the {@link Circuit}
 * opens: calls go straight to the policy without touching the store, except that once per probe
 * interval one call tries the store. The first success closes the circuit and the store decides again with
 * its own state, without a restart. A store error for one key (a script failing on foreign data) or an
 * overloaded client is degraded for that call only: it says nothing about the store's health.
 *
 * <p><b>Policies.</b> {@code FAIL_OPEN} allows with the numbers of a fresh key ({@code remaining} = capacity
 * minus cost); {@code FAIL_CLOSED} denies with {@code retryAfter} = the probe interval, the soonest the store
 * can be back; {@code FALLBACK_LOCAL} asks an in-memory limiter with the same limits (created on first use and
 * kept across outages, so its buckets keep refilling in between). Bad input is rejected before any of this,
 * the same {@link IllegalArgumentException} the store would throw. An estimate ({@code tryAcquireEstimate}) is decided
 * so too, leaving nothing pending (pending locally with {@code FALLBACK_LOCAL}, and settled there); a settle the store
 * cannot make answers {@link Settlement#NOT_PENDING}, the estimate standing, and is reported as the store's failure.
 *
 * <p><b>Starting with or without the store.</b> Built from a {@link Supplier}, {@code build()} opens the store
 * and waits for that first attempt up to the startup wait (default {@value #DEFAULT_STARTUP_WAIT_SECONDS} s), so
 * that over a healthy store the first decision is the store's. A store the attempt finds <b>misconfigured</b>
 * ({@link Degradation#MISCONFIGURED}: a refused password, an unknown host, another protocol at that port) makes
 * {@code build()} throw the store's exception, and nothing is retried (unless
 * {@link Builder#startDespiteMisconfiguration(boolean)}); a store that is <b>unavailable</b>, or an attempt that
 * outlasts the wait, leaves the {@link StoreOpener} trying on its thread while the policy decides, so that an
 * application starts while its store is down ({@link StoreOpener} says when it retries and how it backs off). An
 * outage is a few log lines, not one per failure ({@link OutageLog}).
 *
 * <p><b>Health.</b> {@link #storeHealth()} is a live view of all this ({@link StoreHealth}: whether the store
 * decides, the cause when it does not, the policy, the degraded decisions by cause), which limiters wrapping this one
 * forward, so that a service reports the remote store's health however it is wrapped.
 *
 * <p>{@link #reset(String, Limit)} is not a decision: its failures propagate (after resetting the local
 * fallback too, if it exists).
 */
public final class FailSafeRateLimiter implements RateLimiter, StoreHealth.Source {

    /**
     * How long {@code build()} waits for a supplier's first attempt: longer than a store's own connect timeout
     * (Redis: 2 s) plus its warm-up, short enough that an application starting beside a dead store starts.
     */
    static final long DEFAULT_STARTUP_WAIT_SECONDS = 10;

    private final FailurePolicy policy;
    private final Circuit circuit;
    private final PolicyDecisions byPolicy;
    private final Optional<StoreHealth> health;
    private final FailSafeSettle settling;
    private final Object lock = new Object();
    private final FailSafeInFlight inFlight;

    /** Null until the opener opened the store (a limiter built from a supplier). */
    private volatile @Nullable RateLimiter store;

    private volatile boolean closed;
    /** Null for a limiter built in front of an open store. */
    private @Nullable StoreOpener opener;

    private FailSafeRateLimiter(Builder b) {
        this.policy = b.policy;
        long probeIntervalNanos = b.probeInterval.toNanos();
        Ticker ticker = b.ticker();
        this.byPolicy = new PolicyDecisions(policy, probeIntervalNanos, ticker, b.fallback);
        OutageLog outages = new OutageLog(ticker, policy, b.logSink);
        this.circuit =
                new Circuit(probeIntervalNanos, ticker, outages, b.store != null ? null : Degradation.UNAVAILABLE);
        this.health = Optional.of(new CircuitHealth(circuit, policy, byPolicy, () -> store != null));
        this.inFlight = new FailSafeInFlight(this::storeToTry, circuit, byPolicy, policy, probeIntervalNanos);
        this.settling = new FailSafeSettle(circuit, byPolicy, this::storeToTry);
        if (b.store != null) {
            store = b.store;
        } else {
            opener = new StoreOpener(
                    Objects.requireNonNull(b.supplier, "a builder has a store or a supplier"),
                    b.probeInterval,
                    b.startDespiteMisconfiguration,
                    this::install,
                    circuit::holdOpen,
                    outages,
                    b.scheduler,
                    b.attempts);
            String late = opener.start(b.startupWait);
            if (late != null) {
                b.logSink.accept(Level.WARNING, late);
            }
        }
    }

    /** Takes the store the opener opened, unless this limiter was closed meanwhile. */
    private boolean install(RateLimiter s) {
        synchronized (lock) {
            if (closed) {
                return false;
            }
            store = s;
            circuit.reset();
            return true;
        }
    }

    /** A fail-safe limiter in front of an open store. */
    public static Builder builder(RateLimiter store) {
        return new Builder(Objects.requireNonNull(store, "store must not be null"), null);
    }

    /**
     * A fail-safe limiter in front of a store that {@code opener} opens (say,
     * {@code () -> RedisRateLimiter.create(uri)}). {@code build()} waits for its first attempt up to the
     * {@linkplain Builder#startupWait(Duration) startup wait}; if that finds the store misconfigured, {@code build()}
     * throws the store's exception; if it finds it unavailable or takes longer, it is called again on a background
     * thread every probe interval until it returns, and the limiter decides by its policy until then.
     */
    public static Builder builder(Supplier<? extends RateLimiter> opener) {
        return new Builder(null, Objects.requireNonNull(opener, "opener must not be null"));
    }

    // ---------------------------------------------------------------------------------------- decisions

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        Object answer = decideNow(s -> s.tryAcquire(key, limit, cost));
        return answer instanceof Degradation cause
                ? byPolicy.decide(PolicyDecisions.Call.TRY_ACQUIRE, key, limit, cost, null, cause)
                : (Decision) answer;
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        return decide(
                s -> s.tryAcquireAsync(key, limit, cost),
                cause -> byPolicy.decide(PolicyDecisions.Call.TRY_ACQUIRE, key, limit, cost, null, cause));
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        Permit.checkAll(permits);
        Object answer = decideNow(s -> s.tryAcquire(permits));
        return answer instanceof Degradation cause ? byPolicy.decide(permits, cause) : (Decision) answer;
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
        Permit.checkAll(permits);
        return decide(s -> s.tryAcquireAsync(permits), cause -> byPolicy.decide(permits, cause));
    }

    @Override
    public PermitDecisions tryAcquireEach(List<Permit> permits) {
        Permit.checkAll(permits);
        Object answer = decideNow(s -> s.tryAcquireEach(permits));
        return answer instanceof Degradation cause ? byPolicy.decideEach(permits, cause) : (PermitDecisions) answer;
    }

    @Override
    public CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
        Permit.checkAll(permits);
        return decide(s -> s.tryAcquireEachAsync(permits), cause -> byPolicy.decideEach(permits, cause));
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        Algorithms.checkReserve(key, limit, cost, maxWait);
        Object answer = decideNow(s -> s.reserve(key, limit, cost, maxWait));
        return answer instanceof Degradation cause
                ? byPolicy.decide(PolicyDecisions.Call.RESERVE, key, limit, cost, maxWait, cause)
                : (Decision) answer;
    }

    @Override
    public CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
        Algorithms.checkReserve(key, limit, cost, maxWait);
        return decide(
                s -> s.reserveAsync(key, limit, cost, maxWait),
                cause -> byPolicy.decide(PolicyDecisions.Call.RESERVE, key, limit, cost, maxWait, cause));
    }

    @Override
    public Decision peek(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        Object answer = decideNow(s -> s.peek(key, limit, cost));
        return answer instanceof Degradation cause
                ? byPolicy.decide(PolicyDecisions.Call.PEEK, key, limit, cost, null, cause)
                : (Decision) answer;
    }

    @Override
    public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        return decide(
                s -> s.peekAsync(key, limit, cost),
                cause -> byPolicy.decide(PolicyDecisions.Call.PEEK, key, limit, cost, null, cause));
    }

    /** The store's; when it cannot decide, the policy's, nothing pending (FALLBACK_LOCAL: pending locally). */
    @Override
    public Decision tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return settling.tryAcquireEstimate(key, limit, estimate, id, settleWithin);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return settling.tryAcquireEstimateAsync(key, limit, estimate, id, settleWithin);
    }

    /** The store's; one it cannot make is NOT_PENDING (the estimate stands), reported and counted degraded. */
    @Override
    public Settlement settle(String key, Limit limit, String id, long actual) {
        return settling.settle(key, limit, id, actual);
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String id, long actual) {
        return settling.settleAsync(key, limit, id, actual);
    }

    /**
     * Every kind of decision, asynchronously: the store's when it is open and the circuit lets this call through,
     * else the policy's; a store failure is classified by the circuit and decided by the policy, while the caller's
     * own mistakes propagate. The store bounds the future by its time budget, this class adds no waiting of its own,
     * and a decision by the policy completes at once.
     */
    private <T> CompletableFuture<T> decide(
            Function<RateLimiter, CompletableFuture<T>> ask, Function<Degradation, T> policy) {
        RateLimiter s = storeToTry();
        if (s == null) {
            return CompletableFuture.completedFuture(policy.apply(circuit.cause()));
        }
        CompletableFuture<T> f;
        try {
            f = ask.apply(s);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((d, e) -> e == null ? succeeded(d) : policy.apply(circuit.failed(e)));
    }

    /**
     * The same, synchronously: the store's answer through {@code ask} (its synchronous view, which over a remote
     * store waits for its future and over the in-memory store builds none), or the {@link Degradation} by which the
     * caller has the policy decide: the store is not asked, or failed. The caller makes the policy's decision itself,
     * rather than passing it in as a function, because a function this method received would be allocated on every
     * call (the JIT compiles the failure branch, which hands it on): 32 B per decision, see bench/README.md.
     */
    private Object decideNow(Function<RateLimiter, ?> ask) {
        RateLimiter s = storeToTry();
        if (s == null) {
            return circuit.cause();
        }
        Object answer;
        try {
            answer = ask.apply(s);
        } catch (RuntimeException e) {
            return circuit.failed(e);
        }
        return succeeded(answer);
    }

    /** The store's slots in flight, or the policy's when it cannot answer: see {@link FailSafeInFlight}. */
    @Override
    public InFlightLimiter inFlight() {
        return inFlight;
    }

    /** Resets the key in the store (failures propagate) and in the local fallback if there is one. */
    @Override
    public void reset(String key, Limit limit) {
        Futures.join(resetAsync(key, limit));
    }

    @Override
    public CompletableFuture<Void> resetAsync(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit);
        RateLimiter local = byPolicy.fallbackIfAny();
        if (local != null) {
            local.reset(key, limit);
        }
        RateLimiter s = store;
        if (s == null) {
            return CompletableFuture.failedFuture(new StoreException(
                    "the store is not open yet (" + circuit.cause().label() + "): the reset of '" + key
                            + "' was not applied; retry when storeHealthy() is true",
                    null,
                    Degradation.UNAVAILABLE));
        }
        return s.resetAsync(key, limit);
    }

    // ---------------------------------------------------------------------------------------- health

    /** Decisions the policy made instead of the store because of {@code cause} (and settles lost), since built. */
    public long degradedCount(Degradation cause) {
        Objects.requireNonNull(cause, "cause must not be null: e.g. Degradation.TIMEOUT");
        return byPolicy.count(cause);
    }

    /** Whether the store is open and the circuit closed: decisions currently come from the store. */
    public boolean storeHealthy() {
        return store != null && circuit.isClosed();
    }

    /** The policy applied when the store cannot decide. */
    public FailurePolicy policy() {
        return policy;
    }

    /** A live view of the store's health, the policy and its decisions; always present. */
    @Override
    public Optional<StoreHealth> storeHealth() {
        return health;
    }

    @Override
    public void close() {
        RateLimiter s;
        synchronized (lock) {
            closed = true;
            s = store;
            if (opener != null) {
                opener.stop();
            }
        }
        if (s != null) {
            s.close();
        }
        byPolicy.close();
    }

    // ---------------------------------------------------------------------------------------- internals

    /** The store when this call should try it: it is open and the circuit lets this call through. */
    private @Nullable RateLimiter storeToTry() {
        RateLimiter s = store;
        return s != null && circuit.allowsCall() ? s : null;
    }

    /** Notes a call the store answered (closing the circuit if it was open) and returns its decision. */
    private <T> T succeeded(T d) {
        circuit.succeeded();
        return d;
    }

    /** Configures a {@link FailSafeRateLimiter}. */
    public static final class Builder extends FailSafeOptions<Builder> {
        final @Nullable RateLimiter store;
        final @Nullable Supplier<? extends RateLimiter> supplier;

        private Builder(@Nullable RateLimiter store, @Nullable Supplier<? extends RateLimiter> supplier) {
            this.store = store;
            this.supplier = supplier;
        }

        @Override
        Builder self() {
            return this;
        }

        /**
         * Builds the limiter; from a supplier, waits for its first attempt ({@link #startupWait(Duration)}).
         *
         * @throws StoreException the store's own, when the first attempt found it misconfigured (or the supplier's
         *                        {@link IllegalArgumentException}), unless {@link #startDespiteMisconfiguration}
         */
        public FailSafeRateLimiter build() {
            return new FailSafeRateLimiter(this);
        }
    }
}
