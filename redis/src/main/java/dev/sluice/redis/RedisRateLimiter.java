package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.store.StoreClock;
import dev.sluice.store.TimeBudget;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} whose state lives in Redis or Redis Cluster, shared by every process that uses
 * the same Redis.
 *
 * <p>Every decision is decided by a Lua script (one per algorithm, under {@code dev/sluice/redis/}), one
 * {@code EVALSHA} per decision or, when callers are concurrent, one for a batch of them
 * ({@link Builder#batching(boolean)}): the script reads the key's state, decides, and writes the new state with a
 * {@code PEXPIRE} equal to the time until the key would be fresh again, so Redis forgets idle keys by itself.
 * Time is Redis's own ({@code TIME} inside the script), never an application clock, so a fleet with skewed
 * clocks still shares one bucket exactly; a client {@link Ticker} can replace it for tests
 * ({@link Builder#ticker(Ticker)}). A denied call writes nothing, unless it read a named limit's state under new
 * numbers: then it writes that state under them (see {@code common.lua}).
 *
 * <p>Calls from many threads share one Lettuce connection and are pipelined on it automatically; the
 * {@code *Async} methods never block. <b>Their futures complete on a Lettuce I/O thread</b> (unless
 * {@link Builder#callbackExecutor} is set): a callback attached to one runs there and must be short and
 * must not block, nor call this limiter synchronously, or it stalls every Redis reply of the limiter.
 *
 * <p><b>Every call has a time budget</b> ({@link Builder#timeBudget}, default 1 s), one deadline from its
 * start that covers sending, waiting for the connection, the {@code NOSCRIPT} fallback and the reply: a
 * synchronous call returns or fails within the budget plus {@link #SLACK} (waking the waiting thread and
 * building the error), and an async call's future completes within the same bound. A call that runs out of
 * budget fails with a {@link RedisStoreException} whose {@link RedisStoreException#degradation()} is
 * {@link Degradation#TIMEOUT}; one made while Redis is unreachable fails at once with
 * {@link Degradation#UNAVAILABLE}; an error reply (a key of another type, a script error) is
 * {@link Degradation#STORE_ERROR}. Wrap the limiter in {@link dev.sluice.failsafe.FailSafeRateLimiter} to turn those
 * into decisions by a {@link dev.sluice.failsafe.FailurePolicy}.
 *
 * <p>A decision is applied by Redis at most once: a command in flight when the connection drops is failed,
 * never re-sent after Lettuce reconnects (so a call that failed may or may not have been applied).
 *
 * <p>A multi-permit request runs as one script, so it is all or nothing;
 * on Redis Cluster its keys must share a hash slot: a key without a {@code {tag}} is its own tag (all limits
 * on one key share a slot), and keys such as {@code {user42}:ip} and {@code {user42}:login} share the tag
 * {@code user42}. A multi-permit across slots is rejected with an {@link IllegalArgumentException}.
 *
 * <p>Precision is the microsecond (Redis's {@code TIME}); durations in decisions are exact nanoseconds
 * computed from that microsecond instant, with fractions of a token carried exactly.
 *
 * <pre>{@code
 * try (RateLimiter limiter = RedisRateLimiter.create("redis://localhost:6379")) {
 *     Decision d = limiter.tryAcquire("user:42", Limit.tokenBucket(10, Rate.perSecond(5)));
 * }
 * }</pre>
 */
public final class RedisRateLimiter implements RateLimiter {

    /**
     * How much later than its time budget a call may return, the documented bound: a call gives up exactly at
     * its deadline (a synchronous one parks its own thread until then, an async one is failed by the JDK's
     * delay scheduler), and this covers waking that thread and building the error (measured on a frozen Redis,
     * with what a starved CPU or a GC pause adds: redis/README.md).
     */
    public static final Duration SLACK = Duration.ofMillis(2);

    /** The time budget of a call unless {@link Builder#timeBudget} says otherwise. */
    public static final Duration DEFAULT_TIME_BUDGET = TimeBudget.DEFAULT;

    private final RedisConnection redis;
    private final ScriptRunner runner;
    /** Coalesces concurrent single-permit decisions into batches; null with {@link Builder#batching(boolean) batching(false)}. */
    private final @Nullable Coalescer coalescer;
    /** The operations, one per kind of decision, that both views use. */
    private final RedisCalls calls;

    private final boolean cluster;
    private final String where;
    private final ReconnectWatch reconnects;

    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisRateLimiter(Builder b) {
        TimeBudget budget = TimeBudget.of("timeBudget", b.timeBudget);
        long minTtlMillis = b.minExpiry != null ? b.minExpiry.toMillis() : (b.clock.isStore() ? 0L : 3_600_000L);
        List<RedisURI> uris = RedisUris.parse(b.uri, b.connectTimeout);
        this.where = RedisUris.describe(uris);
        this.reconnects = new ReconnectWatch();
        RedisFailures failures = new RedisFailures(where, budget, reconnects);
        RedisConnection redis = RedisConnection.open(
                        b.uri, uris, where, b.cluster, b.resources, b.connectTimeout, reconnects)
                .watchedBy(reconnects);
        this.redis = redis;
        this.cluster = redis.cluster;
        this.runner = new ScriptRunner(redis.scripting, budget, failures, where, b.callbackExecutor);
        this.coalescer = b.batching ? new Coalescer(runner, failures, cluster) : null;
        this.calls = new RedisCalls(
                runner, coalescer, redis.keyCommands, cluster, b.clock, b.keyPrefix, minTtlMillis, closed, toString());
        try {
            runner.loadScripts(b.connectTimeout);
            runner.warmUp(calls.peek("sluice:warm-up", RedisCalls.WARM_UP_LIMIT, 1), b.connectTimeout);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** A limiter on the Redis (or Redis Cluster) at {@code redisUri}, such as {@code redis://localhost:6379}. */
    public static RedisRateLimiter create(String redisUri) {
        return builder(redisUri).build();
    }

    /**
     * A builder for the Redis at {@code redisUri}: several addresses ({@code redis://h1:7000,h2:7001}) mean a Redis
     * Cluster, a single one is asked ({@code INFO cluster}) unless {@link Builder#cluster(boolean)} says which it is;
     * {@code redis-sentinel://h1:26379,h2:26379#mymaster}: the master Redis Sentinel names (redis/README.md).
     */
    public static Builder builder(String redisUri) {
        return new Builder(redisUri);
    }

    /** True when this limiter talks to a Redis Cluster. */
    public boolean isCluster() {
        return cluster;
    }

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        return runner.await(calls.tryAcquire(key, limit, cost));
    }

    /**
     * {@inheritDoc}
     *
     * <p><b>The future completes on a Lettuce I/O thread</b> unless {@link Builder#callbackExecutor} names
     * an executor: a callback attached to it ({@code thenApply}, {@code thenAccept}, ...) then runs on that
     * thread, which serves every command of this limiter (and of any client sharing its
     * {@code ClientResources}). Such a callback must be short and must not block: no I/O, no
     * {@code join()}, and no synchronous call of this limiter, which would wait for a reply that the blocked
     * thread itself has to read (it fails after the time budget). Use {@code thenApplyAsync(fn,
     * executor)} for such work, or set {@link Builder#callbackExecutor}. A future that runs out of budget is
     * failed by the JDK's delay scheduler thread, where its callbacks then run.
     */
    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        return runner.withDeadline(calls.tryAcquire(key, limit, cost));
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        return runner.await(calls.tryAcquire(permits));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
        return runner.withDeadline(calls.tryAcquire(permits));
    }

    @Override
    public PermitDecisions tryAcquireEach(List<Permit> permits) {
        return runner.await(calls.tryAcquireEach(permits));
    }

    @Override
    public CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
        return runner.withDeadline(calls.tryAcquireEach(permits));
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        return runner.await(calls.reserve(key, limit, cost, maxWait));
    }

    /**
     * {@link #reserve(String, Limit, long, Duration)} without blocking the caller on I/O. The future completes on a
     * Lettuce I/O thread unless {@link Builder#callbackExecutor} is set: see
     * {@link #tryAcquireAsync(String, Limit, long)}.
     */
    @Override
    public CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
        return runner.withDeadline(calls.reserve(key, limit, cost, maxWait));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One {@code EVALSHA} of a read-only script ({@code peek.lua}) that reads the key's state and the
     * time (Redis's {@code TIME}, or the client ticker's) and writes nothing: no state, no {@code PEXPIRE},
     * and a key never seen stays absent. The Decision is then computed in Java by the pure step
     * {@link Algorithms#peek} on that state at that instant. Bad input throws before anything is sent. Like
     * any read, a peek may be stale by the time the caller acts on it: a concurrent tryAcquire may take the
     * permits in between.
     */
    @Override
    public Decision peek(String key, Limit limit, long cost) {
        return runner.await(calls.peek(key, limit, cost));
    }

    /**
     * {@link #peek(String, Limit, long)} without blocking the caller on I/O. The future completes on a
     * Lettuce I/O thread unless {@link Builder#callbackExecutor} is set: see
     * {@link #tryAcquireAsync(String, Limit, long)}.
     */
    @Override
    public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        return runner.withDeadline(calls.peek(key, limit, cost));
    }

    @Override
    public void reset(String key, Limit limit) {
        runner.await(calls.reset(key, limit));
    }

    /** {@link #reset(String, Limit)} ({@code DEL}) without blocking the caller on I/O. */
    @Override
    public CompletableFuture<Void> resetAsync(String key, Limit limit) {
        return runner.withDeadline(calls.reset(key, limit)).thenRun(() -> {});
    }

    @Override
    public Decision tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return runner.await(calls.tryAcquireEstimate(key, limit, estimate, id, settleWithin));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return runner.withDeadline(calls.tryAcquireEstimate(key, limit, estimate, id, settleWithin));
    }

    @Override
    public Settlement settle(String key, Limit limit, String reservation, long actual) {
        return runner.await(calls.settle(key, limit, reservation, actual));
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String reservation, long actual) {
        return runner.withDeadline(calls.settle(key, limit, reservation, actual));
    }

    /** Slots with a lease on this Redis, one {@code EVALSHA} per call: see {@link RedisInFlight}. */
    @Override
    public InFlightLimiter inFlight() {
        return calls.inFlight;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        reconnects.stop();
        if (coalescer != null) {
            coalescer.close(new IllegalStateException(this + " is closed: create a new limiter"));
        }
        redis.close();
    }

    @Override
    public String toString() {
        return "RedisRateLimiter[" + where + (cluster ? ", cluster" : "") + "]";
    }

    /** Options for a {@link RedisRateLimiter}. */
    public static final class Builder {
        private final String uri;
        private StoreClock clock = StoreClock.store();
        private String keyPrefix = "sluice:";
        private Duration timeBudget = DEFAULT_TIME_BUDGET;
        private Duration connectTimeout = Duration.ofSeconds(2);
        /** Null until set: a single address is asked whether it is a cluster. */
        private @Nullable Boolean cluster;
        /** Null until set: the default depends on the clock. */
        private @Nullable Duration minExpiry;
        /** Null until set: the limiter creates its own. */
        private @Nullable ClientResources resources;

        private @Nullable Executor callbackExecutor;
        private boolean batching = true;

        private Builder(String uri) {
            this.uri = Objects.requireNonNull(uri, "redisUri must not be null: e.g. \"redis://localhost:6379\"");
        }

        /**
         * Decide with this clock (epoch nanoseconds, truncated to the microsecond) instead of Redis's
         * {@code TIME}. For tests and simulations: in production every process must share Redis's clock.
         * Redis still expires keys by its own clock, so with a ticker every key is kept at least
         * {@link #minExpiry(Duration)} (default one hour).
         */
        public Builder ticker(Ticker ticker) {
            this.clock = StoreClock.client(Objects.requireNonNull(ticker, "ticker must not be null"));
            return this;
        }

        /** Prepended to every Redis key (default {@code sluice:}); must not contain braces. */
        public Builder keyPrefix(String prefix) {
            RedisKeys.checkPrefix(prefix);
            this.keyPrefix = prefix;
            return this;
        }

        /**
         * How long any call of the limiter (a decision, a peek, a reset) may take, from its start to its
         * result (default 1 s, {@link TimeBudget#DEFAULT}): one deadline that covers sending, a connection still being set up, the
         * {@code EVALSHA} and, on {@code NOSCRIPT}, its {@code EVAL}, and the reply. Past it the call fails
         * with a {@link RedisStoreException} of {@link Degradation#TIMEOUT}; it returns within this budget
         * plus {@link RedisRateLimiter#SLACK}, synchronous or async. A call that timed out may still have
         * been applied by Redis. Raise it for a Redis that is far away or a machine that is heavily loaded.
         */
        public Builder timeBudget(Duration budget) {
            this.timeBudget = TimeBudget.of("timeBudget", budget).duration();
            return this;
        }

        /**
         * How long {@link #build()} may take to connect and load the scripts (default 2 s); also how long
         * each reconnection attempt may take in the background. Calls never wait for it: while the
         * connection is down they fail at once ({@link Degradation#UNAVAILABLE}) or at their budget.
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = RedisUris.checkConnectTimeout(timeout);
            return this;
        }

        /** Whether the URI is a Redis Cluster; by default a single address is asked ({@code INFO cluster}). */
        public Builder cluster(boolean cluster) {
            this.cluster = cluster;
            return this;
        }

        /**
         * The least {@code PEXPIRE} any key gets: 0 with Redis's clock (keys expire exactly when fresh),
         * one hour with a client {@link #ticker(Ticker)}, whose time Redis cannot follow.
         */
        public Builder minExpiry(Duration minExpiry) {
            Objects.requireNonNull(minExpiry, "minExpiry must not be null");
            if (minExpiry.isNegative()) {
                throw new IllegalArgumentException("minExpiry " + minExpiry + " must not be negative");
            }
            this.minExpiry = minExpiry;
            return this;
        }

        /**
         * Share Lettuce's event loops and timers with other clients (the limiter does not shut them down).
         * By default the limiter has its own, which retry a lost connection after 1 ms, then twice as long
         * each time up to 100 ms; given resources keep their own {@code reconnectDelay} (Lettuce's default
         * grows to 30 s, so a Redis back from an outage may stay unused that long).
         */
        public Builder clientResources(ClientResources resources) {
            this.resources = Objects.requireNonNull(resources, "clientResources must not be null");
            return this;
        }

        /**
         * Complete the futures of the {@code *Async} methods on this executor instead of on a Lettuce I/O
         * thread, so callbacks attached to them may block or call this limiter synchronously. Costs a hand-off
         * to another thread per call; synchronous calls never use it. (As with any {@code CompletableFuture},
         * a callback attached after the future has completed runs on the thread that attaches it.) By default (none) futures complete on
         * the I/O thread and callbacks must be short and must not block. The limiter does not shut the
         * executor down.
         */
        public Builder callbackExecutor(Executor executor) {
            this.callbackExecutor = Objects.requireNonNull(executor, "callbackExecutor must not be null");
            return this;
        }

        /**
         * Whether concurrent single-permit decisions share script calls (default {@code true}). While a few calls
         * of this limiter are at Redis, the next ones queue and go as one {@code EVALSHA} that decides each on its
         * own, in arrival order (up to 64 a call; on Redis Cluster one call per hash slot): Redis runs one script
         * for many decisions, which multiplies what one Redis serves. A lone caller is never delayed (it is
         * sent at once), each decision keeps its time budget and its exact answer. {@code false}: one
         * {@code EVALSHA} per decision, always.
         */
        public Builder batching(boolean batching) {
            this.batching = batching;
            return this;
        }

        /** Connects, loads the scripts, and returns the limiter. */
        public RedisRateLimiter build() {
            return new RedisRateLimiter(this);
        }
    }
}
