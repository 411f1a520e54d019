package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.store.StoreClock;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The operations of a {@link RedisRateLimiter}, one per kind of decision, each written once: checks the input (before
 * anything is sent or changed), builds the script call and sends it (a single-permit decision through the batches),
 * returning the call's future without a deadline. The limiter's two views use them: the synchronous one waits for the
 * call under its budget ({@link ScriptRunner#await}), the asynchronous one gets it failed at the deadline
 * ({@link ScriptRunner#withDeadline}).
 */
final class RedisCalls {
    private final ScriptRunner runner;
    /** Coalesces concurrent single-permit decisions into batches; null without batching. */
    private final @Nullable Coalescer coalescer;

    private final RedisKeyAsyncCommands<byte[], byte[]> keyCommands;
    private final boolean cluster;
    /** Whose clock decides: Redis's {@code TIME} by default, a client ticker's in tests. */
    private final StoreClock clock;

    private final String prefix;
    private final long minTtlMillis;
    private final AtomicBoolean closed;
    private final String name;
    /** Work in flight on the same connection, clock, key prefix and expiry floor as these calls. */
    final RedisInFlight inFlight;

    RedisCalls(
            ScriptRunner runner,
            @Nullable Coalescer coalescer,
            RedisKeyAsyncCommands<byte[], byte[]> keyCommands,
            boolean cluster,
            StoreClock clock,
            String prefix,
            long minTtlMillis,
            AtomicBoolean closed,
            String name) {
        this.runner = runner;
        this.coalescer = coalescer;
        this.keyCommands = keyCommands;
        this.cluster = cluster;
        this.clock = clock;
        this.prefix = prefix;
        this.minTtlMillis = minTtlMillis;
        this.closed = closed;
        this.name = name;
        this.inFlight = new RedisInFlight(this, clock, prefix, minTtlMillis);
    }

    ScriptRunner.Call<Decision> tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        ScriptFields.checkExact(limit);
        return decide(ScriptCall.of(
                prefix, new String[] {key}, new Limit[] {limit}, new long[] {cost}, -1, clock.read(), minTtlMillis));
    }

    ScriptRunner.Call<Decision> tryAcquire(List<Permit> permits) {
        ScriptCall call = multiPermit(permits);
        return run(call, reply -> Decision.mostRestrictive(call.decisions(reply)));
    }

    /** {@link #tryAcquire(List)} with each permit's own decision: the same script, its reply read per permit. */
    ScriptRunner.Call<PermitDecisions> tryAcquireEach(List<Permit> permits) {
        if (permits.size() == 1) { // the single decision, batched with others
            Permit p = permits.get(0);
            return tryAcquire(p.key(), p.limit(), p.cost()).map(PermitDecisions::of);
        }
        ScriptCall call = multiPermit(permits);
        return run(call, reply -> ScriptLooks.each(call, reply));
    }

    /** All or nothing: one script for every permit (on Redis Cluster, in one hash slot). */
    private ScriptCall multiPermit(List<Permit> permits) {
        Permit.checkAll(permits);
        ScriptCall call = ScriptCall.of(prefix, permits, clock.read(), minTtlMillis);
        if (cluster) {
            call.checkOneSlot();
        }
        return call;
    }

    ScriptRunner.Call<Decision> reserve(String key, Limit limit, long cost, Duration maxWait) {
        long maxWaitNanos = Algorithms.checkReserve(key, limit, cost, maxWait);
        ScriptFields.checkExact(limit);
        return decide(ScriptCall.of(
                prefix,
                new String[] {key},
                new Limit[] {limit},
                new long[] {cost},
                maxWaitNanos,
                clock.read(),
                minTtlMillis));
    }

    /** The limit of the warm-up peek: any limit does, nothing is written. */
    static final Limit WARM_UP_LIMIT = Limit.fixedWindow(1, Duration.ofSeconds(1));

    ScriptRunner.Call<Decision> peek(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        ScriptFields.checkExact(limit);
        ScriptCall call = ScriptCall.peek(prefix, key, limit, cost, clock.read());
        return run(call, reply -> ScriptLooks.peek(call, reply));
    }

    ScriptRunner.Call<Long> reset(String key, Limit limit) {
        Permit.checkKey(key);
        Objects.requireNonNull(limit, "limit must not be null: e.g. Limit.tokenBucket(10, Rate.perSecond(1))");
        byte[] k = RedisKeys.of(prefix, key, limit);
        checkOpen();
        return runner.delete(keyCommands, k);
    }

    /** A decision on an estimate that leaves a pending reservation ({@link RedisSettle}), through the batches. */
    ScriptRunner.Call<Decision> tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration within) {
        ScriptCall call = RedisSettle.estimate(prefix, key, limit, estimate, id, within, clock.read(), minTtlMillis);
        return submit(Coalescer.ESTIMATE, call, reply -> RedisSettle.estimated(call, reply, id));
    }

    /** Settles a pending reservation ({@link RedisSettle}), through the batches. */
    ScriptRunner.Call<Settlement> settle(String key, Limit limit, String id, long actual) {
        ScriptCall call = RedisSettle.settle(prefix, key, limit, id, actual, clock.read(), minTtlMillis);
        return submit(Coalescer.SETTLE, call, reply -> RedisSettle.settled(call, reply));
    }

    /**
     * Another operation than a decision ({@code kind}: see {@link Coalescer}): through the batches, or its own {@code
     * EVALSHA} without batching; {@code finish} reads its script's reply.
     */
    <T> ScriptRunner.Call<T> submit(byte kind, ScriptCall call, Function<List<Object>, T> finish) {
        if (coalescer == null) {
            return run(call, finish);
        }
        checkOpen();
        return coalescer.submit(kind, call, finish);
    }

    /** Waits for a call under its budget (the synchronous view's wait). */
    <T> T await(ScriptRunner.Call<T> call) {
        return runner.await(call);
    }

    /** A call's future as an async caller gets it: failed at its deadline. */
    <T> java.util.concurrent.CompletableFuture<T> withDeadline(ScriptRunner.Call<T> call) {
        return runner.withDeadline(call);
    }

    /** A single-permit decision: through the batches, or its own {@code EVALSHA} without batching. */
    private ScriptRunner.Call<Decision> decide(ScriptCall call) {
        if (coalescer == null) {
            return run(call, call::single);
        }
        checkOpen();
        return coalescer.submit(call);
    }

    /** Runs {@code call}'s script unless the limiter is closed. */
    private <T> ScriptRunner.Call<T> run(ScriptCall call, Function<List<Object>, T> finish) {
        checkOpen();
        return runner.run(call, finish);
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(name + " is closed: create a new limiter");
        }
    }
}
