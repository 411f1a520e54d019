package dev.sluice;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;

/**
 * One key under one limit, as an object: what Guava's {@code RateLimiter}, a Bucket4j {@code Bucket} or a
 * Resilience4j {@code RateLimiter} is to their users, on any Sluice store. Get one from
 * {@link RateLimiter#bind(String, Limit)} and keep it, one per protected resource:
 *
 * <pre>{@code
 * BoundLimit exports = limiter.bind("exports", Limit.tokenBucket(10, Rate.perSecond(2)));
 * if (exports.tryAcquire().allowed()) { ... }       // never waits
 * if (exports.tryAcquirePermit()) { ... }            // the same verdict, no Decision built
 * exports.acquire();                                // waits its turn: blocks until granted
 * if (exports.tryAcquire(1, Duration.ofMillis(200))) { ... }   // waits at most 200 ms, else false at once
 * }</pre>
 *
 * <h2>Waiting</h2>
 * The blocking calls never spin and hold no lock while they wait. For the token bucket and GCRA they
 * <b>reserve</b> first ({@link RateLimiter#reserve}: the permits are taken now, at the first instant they are
 * free) and then park exactly the reservation's {@code retryAfter}, so N threads waiting on one handle are released
 * at the limit's rate, in the order they reserved, one store call each. The other algorithms cannot book the future:
 * there a blocking call tries, and when denied parks the decision's {@code retryAfter} (the earliest instant the
 * permits can be free) and tries again; waiters then race, as they do on Bucket4j's blocking bucket.
 * A reservation is spent once made: a thread interrupted while it waits for it gets an
 * {@link InterruptedException} and its permits are not given back, which errs on the strict side, never over.
 * A thread already interrupted when it calls a blocking method gets an {@link InterruptedException} at once, with its
 * interrupt status cleared, and nothing is taken.
 *
 * <h2>More than the capacity at once</h2>
 * {@link #tryAcquire(long)}, {@link #tryAcquirePermits(long)} and {@link #tryAcquire(long, Duration)} reject a cost
 * above the limit's capacity with an {@link IllegalArgumentException}: no bucket ever holds that many, so the call
 * could never be granted, and a timed call cannot take part of it and then give up. {@link #acquire(long)} waits as
 * long as it takes, so on the token bucket and GCRA it accepts any cost: it books the permits in portions of at most
 * the capacity, back to back (one store reservation each), and parks until the last portion is free, so the permits
 * pass at the limit's rate (from a full bucket: the capacity at once, then the rest at the rate). Guava's
 * {@code acquire(n)} instead lets a call of any size through at once and makes the <i>next</i> caller wait for it;
 * here each caller waits for its own permits, so the limit holds for every call, the first included, at the same
 * throughput. Each portion is one store call: give the limit a capacity near the largest cost you acquire. The
 * window algorithms cannot book the future and reject such a cost.
 *
 * <p>Time is the store's (its ticker, Redis's {@code TIME}, the database's clock); the wait itself is a
 * {@link Sleeper}, {@link Sleeper#PARK} unless {@link #withSleeper} says otherwise (tests and simulations give one
 * that advances their {@link ManualTicker}).
 *
 * <p>A handle is immutable and thread-safe; it holds no resources ({@link RateLimiter#close()} ends it with its
 * store). The in-memory store's handle resolves the key once (its hash and its slot), so its {@link #tryAcquire()}
 * costs less than the keyed call; on the remote stores a handle is the keyed call with the key and limit bound.
 */
public class BoundLimit {
    private final RateLimiter limiter;
    private final String key;
    private final Limit limit;
    private final Sleeper sleeper;

    /** How a blocking call waits: parks the calling thread for {@code nanos}, or throws when it is interrupted. */
    @FunctionalInterface
    public interface Sleeper {
        /** {@link LockSupport#parkNanos} until {@code nanos} have passed on {@code System.nanoTime()}; interruptible. */
        Sleeper PARK = nanos -> {
            long deadline = System.nanoTime() + nanos;
            for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
                LockSupport.parkNanos(left);
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for permits");
                }
            }
        };

        void sleep(long nanos) throws InterruptedException;
    }

    /** For stores that resolve the key themselves ({@link RateLimiter#bind}); others get {@link #of}. */
    protected BoundLimit(RateLimiter limiter, String key, Limit limit, Sleeper sleeper) {
        this.limiter = Objects.requireNonNull(limiter, "limiter must not be null: e.g. InMemoryRateLimiter.create()");
        Permit.checkKeyAndLimit(key, limit);
        this.key = key;
        this.limit = limit;
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper must not be null: e.g. BoundLimit.Sleeper.PARK");
    }

    /** The handle of {@code key} under {@code limit} on any store: every call is the store's keyed call. */
    public static BoundLimit of(RateLimiter limiter, String key, Limit limit) {
        return new BoundLimit(limiter, key, limit, Sleeper.PARK);
    }

    /** The same key and limit, whose blocking calls wait with {@code sleeper}. */
    public BoundLimit withSleeper(Sleeper sleeper) {
        return new BoundLimit(limiter, key, limit, sleeper);
    }

    public final String key() {
        return key;
    }

    public final Limit limit() {
        return limit;
    }

    public final RateLimiter limiter() {
        return limiter;
    }

    protected final Sleeper sleeper() {
        return sleeper;
    }

    /** Takes one permit if it is free now; never waits. */
    public final Decision tryAcquire() {
        return tryAcquire(1);
    }

    /** Takes {@code cost} permits if they are free now, all or none; never waits. */
    public Decision tryAcquire(long cost) {
        return limiter.tryAcquire(key, limit, cost);
    }

    /**
     * Takes one permit if it is free now and says only whether it did; never waits. The same verdict and the same
     * state change as {@code tryAcquire().allowed()}, for callers that need nothing else: the in-memory store then
     * builds no {@link Decision} at all (nothing allocated, no remaining or retry time computed). Guava's
     * {@code tryAcquire()}, Bucket4j's {@code tryConsume(1)}, Resilience4j's {@code acquirePermission()}.
     */
    public final boolean tryAcquirePermit() {
        return tryAcquirePermits(1);
    }

    /** {@link #tryAcquirePermit()} for {@code cost} permits, all or none: {@code tryAcquire(cost).allowed()}. */
    public boolean tryAcquirePermits(long cost) {
        return tryAcquire(cost).allowed();
    }

    /** {@link #tryAcquire(long)} without blocking on I/O: a remote store's future, a completed one in memory. */
    public final CompletableFuture<Decision> tryAcquireAsync(long cost) {
        return limiter.tryAcquireAsync(key, limit, cost);
    }

    public final CompletableFuture<Decision> tryAcquireAsync() {
        return tryAcquireAsync(1);
    }

    /** What {@link #tryAcquire(long)} would decide now, taking nothing. */
    public final Decision peek(long cost) {
        return limiter.peek(key, limit, cost);
    }

    public final Decision peek() {
        return peek(1);
    }

    /** Forgets the key's state: it starts afresh. */
    public final void reset() {
        limiter.reset(key, limit);
    }

    /**
     * Takes {@code cost} permits if they are free within {@code timeout}, waiting for them; returns false at once
     * (taking nothing, not waiting) when they cannot be had by then. Guava's {@code tryAcquire(permits, timeout)},
     * Bucket4j's {@code asBlocking().tryConsume(n, maxWait)}. A cost above the capacity is an
     * {@link IllegalArgumentException} (see the class comment).
     *
     * @throws InterruptedException when the thread is interrupted while it waits (its permits stay taken), or at
     *     once, taking nothing, when it was interrupted before the call
     */
    public final boolean tryAcquire(long cost, Duration timeout) throws InterruptedException {
        limit.checkCost(cost);
        Objects.requireNonNull(timeout, "timeout must not be null: e.g. Duration.ofMillis(100)");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout " + timeout + " is negative: give zero (do not wait) or more");
        }
        checkInterrupt();
        if (limit.algorithm().isTat()) {
            Decision d = reserveInterruptibly(cost, timeout);
            if (!d.allowed()) {
                return false;
            }
            sleeper.sleep(d.retryAfterNanos());
            return true;
        }
        long budget = timeout.compareTo(FOREVER) >= 0 ? Long.MAX_VALUE : timeout.toNanos();
        long waited = 0;
        for (; ; ) {
            Decision d = tryAcquireInterruptibly(cost);
            if (d.allowed()) {
                return true;
            }
            long wait = Math.max(1, d.retryAfterNanos());
            if (wait > budget - waited) {
                return false;
            }
            sleeper.sleep(wait);
            waited += wait;
        }
    }

    /**
     * Takes one permit, waiting as long as it takes.
     *
     * @throws InterruptedException when the thread is interrupted while it waits (its permit stays taken), or at
     *     once, taking nothing, when it was interrupted before the call
     */
    public final void acquire() throws InterruptedException {
        acquire(1);
    }

    /**
     * Takes {@code cost} permits, waiting as long as it takes (see the class comment: reserve, then park exactly
     * until they are free). Guava's {@code acquire(permits)}, Bucket4j's {@code asBlocking().consume(n)}, but
     * interruptible. On the token bucket and GCRA any cost of 1 or more: above the capacity it is booked in portions
     * of the capacity and this call waits for the last one.
     *
     * @throws InterruptedException when the thread is interrupted while it waits (the permits it booked stay taken),
     *     or at once, taking nothing, when it was interrupted before the call
     */
    public final void acquire(long cost) throws InterruptedException {
        if (cost > limit.capacity() && limit.algorithm().isTat()) {
            acquireInPortions(cost);
            return;
        }
        limit.checkCost(cost);
        checkInterrupt();
        if (limit.algorithm().isTat()) {
            Decision d = reserveInterruptibly(cost, FOREVER);
            if (d.allowed()) {
                sleeper.sleep(d.retryAfterNanos());
                return;
            }
            // a wait longer than the store can book (centuries at this rate): wait in steps instead
        }
        for (; ; ) {
            Decision d = tryAcquireInterruptibly(cost);
            if (d.allowed()) {
                return;
            }
            sleeper.sleep(Math.max(1, d.retryAfterNanos()));
        }
    }

    /**
     * {@link #acquire(long)} of more than the capacity (token bucket, GCRA): books portions of at most the capacity
     * back to back, each at the first instant it is free, then parks until the last one is (the one furthest out).
     */
    private void acquireInPortions(long cost) throws InterruptedException {
        long left = cost;
        long wait = 0;
        while (left > 0) {
            checkInterrupt(); // stop booking: what is booked stays taken
            long portion = Math.min(left, limit.capacity());
            Decision d = reserveInterruptibly(portion, FOREVER);
            if (!d.allowed()) {
                // further out than the store can book (centuries at this rate): what is booked first, then the rest
                sleeper.sleep(wait);
                for (; left > 0; left -= portion) {
                    portion = Math.min(left, limit.capacity());
                    acquire(portion);
                }
                return;
            }
            wait = Math.max(wait, d.retryAfterNanos());
            left -= portion;
        }
        sleeper.sleep(wait);
    }

    /** The longest wait a reservation may book: the store clamps it to what it can represent. */
    private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE);

    /**
     * A store call of a blocking method: a remote store interrupted while waiting for its answer keeps the thread's
     * interrupt and fails the call with its own exception; a blocking method then throws
     * {@link InterruptedException}, as it promises (a reservation the store made stays taken: strict, never over).
     */
    private Decision reserveInterruptibly(long cost, Duration wait) throws InterruptedException {
        try {
            return limiter.reserve(key, limit, cost, wait);
        } catch (RuntimeException e) {
            throw interruptedOr(e);
        }
    }

    private Decision tryAcquireInterruptibly(long cost) throws InterruptedException {
        try {
            return tryAcquire(cost);
        } catch (RuntimeException e) {
            throw interruptedOr(e);
        }
    }

    private static RuntimeException interruptedOr(RuntimeException e) throws InterruptedException {
        if (Thread.interrupted()) {
            InterruptedException ie = new InterruptedException("interrupted while the store decided");
            ie.initCause(e);
            throw ie;
        }
        return e;
    }

    private static void checkInterrupt() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for permits");
        }
    }

    @Override
    public String toString() {
        return "BoundLimit[key=" + Permit.abbreviate(key) + ", limit=" + limit.describe() + "]";
    }
}
