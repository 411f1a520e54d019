package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Exact;
import dev.sluice.algorithm.Settle;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;
import dev.sluice.store.StoreClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Costs known only afterwards on Redis ({@link dev.sluice.RateLimiter#tryAcquireEstimate} and {@link
 * dev.sluice.RateLimiter#settle}): each one run of a script, its own {@code EVALSHA} or, under load, an entry of a
 * {@code batch.lua} call with the limiter's other calls ({@link Coalescer}). {@code estimate.lua} decides exactly as a
 * single-permit {@code tryAcquire} on the estimate and, when allowed, writes the reservation's pending record beside
 * the key's state ({@link RedisKeys#pending}: same hash tag, so one Redis Cluster slot), with the estimate, the instant
 * it was taken (the store's clock, as every decision's) and the instant it expires, kept with {@code PX} until then;
 * {@code settle.lua} deletes the record and applies {@code actual − estimate} to the state, both in one script, so a
 * settle is applied once (a retried one finds no record) and never half. A duplicate id is refused inside the script,
 * before anything is taken.
 *
 * <p>The scripts do the state arithmetic (each algorithm's rule is in {@code settle.lua}'s header, the same as the pure
 * step {@link Settle}'s); Java computes the numbers of the {@link Settlement}: a token bucket's adjustment
 * ({@link Settle#tatAdjusted}, after checking that the script's {@code B'} is {@link Settle#tatBacklog}'s) and each
 * algorithm's remaining permits with the pure {@link Algorithms#peek} on the state the script wrote, at the instant it
 * used.
 */
final class RedisSettle {
    private RedisSettle() {}

    /** The call of {@code estimate.lua}, every argument checked before anything is sent. */
    static ScriptCall estimate(
            String prefix,
            String key,
            Limit limit,
            long estimate,
            String id,
            Duration within,
            StoreClock.Reading now,
            long minTtlMillis) {
        Permit.checkKey(key);
        Settlement.checkId("reservation", id);
        Settlement.checkWithin("settleWithin", within);
        Permit.check(key, limit, estimate);
        ScriptFields.checkExact(limit);
        ScriptCall call = ScriptCall.of(
                prefix, new String[] {key}, new Limit[] {limit}, new long[] {estimate}, -1, now, minTtlMillis);
        return call.with(
                LuaScripts.INSTANCE.estimate,
                RedisKeys.pending(prefix, key, limit, id),
                ScriptFields.ascii(estimate),
                ScriptFields.ascii(Exact.ceilDiv(within.toNanos(), 1000)));
    }

    /** The Decision of {@code estimate.lua}'s reply; a reservation already pending is the caller's error. */
    static Decision estimated(ScriptCall call, List<Object> reply, String id) {
        if (ScriptCall.num(reply, 1) == -5) {
            throw new IllegalArgumentException("reservation '" + id + "' is already pending on key '"
                    + RedisKeys.abbreviate(call.userKey()) + "' under limit "
                    + call.limit(0).describe()
                    + ": nothing was taken; use a new id per reservation (an id is pending until it is settled or"
                    + " its settleWithin has passed)");
        }
        return call.single(reply);
    }

    /** The call of {@code settle.lua}, every argument checked before anything is sent. */
    static ScriptCall settle(
            String prefix, String key, Limit limit, String id, long actual, StoreClock.Reading now, long minTtlMillis) {
        Permit.checkKey(key);
        Objects.requireNonNull(limit, "limit must not be null: settle under the limit the estimate was taken on");
        Settlement.checkId("reservation", id);
        Settlement.checkActual(limit, actual);
        ScriptFields.checkExact(limit);
        ScriptCall call = ScriptCall.of(
                prefix, new String[] {key}, new Limit[] {limit}, new long[] {actual}, -1, now, minTtlMillis);
        byte[] maxUs = ScriptFields.EMPTY;
        byte[] maxFrac = ScriptFields.EMPTY;
        if (limit.algorithm().isTat()) {
            long k = 1000 * limit.timeScale();
            maxUs = ScriptFields.ascii(Limit.MAX_SCALED / k);
            maxFrac = ScriptFields.ascii(Limit.MAX_SCALED % k);
        }
        return call.with(
                LuaScripts.INSTANCE.settle,
                RedisKeys.pending(prefix, key, limit, id),
                ScriptFields.ascii(actual),
                maxUs,
                maxFrac,
                ScriptFields.EMPTY,
                ScriptFields.EMPTY);
    }

    /** The Settlement of {@code settle.lua}'s reply (see its header). */
    static Settlement settled(ScriptCall call, List<Object> reply) {
        long code = ScriptCall.num(reply, 1);
        if (code == 0) {
            return Settlement.NOT_PENDING;
        }
        if (code == -3) { // a named token bucket's state under other numbers: converted, and settled again
            throw new ScriptCall.Changed(0, ScriptCall.bytes(reply, 3), ScriptCall.num(reply, 0));
        }
        Limit limit = call.limit(0);
        long estimate = Long.parseLong(new String(ScriptCall.bytes(reply, 2), StandardCharsets.US_ASCII));
        if (code == -6) { // the record's estimate was taken under other numbers of this named limit
            throw new ScriptCall.Changed(ScriptCall.bytes(reply, 2), scaled(estimate, limit));
        }
        long nowNanos = ScriptCall.num(reply, 0) * 1000;
        long actual = call.cost(0);
        long adjusted = ScriptCall.num(reply, 3);
        State after;
        switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> {
                long k = 1000 * limit.timeScale();
                long before = ScriptCall.num(reply, 4) * k + ScriptCall.num(reply, 5);
                long backlog = ScriptCall.num(reply, 7) * k + ScriptCall.num(reply, 8);
                checkBacklog(call, before, actual - estimate, backlog);
                adjusted = Settle.tatAdjusted(before, backlog, actual - estimate, limit);
                after = new TatState(backlog, nowNanos);
            }
            case FIXED_WINDOW -> after = new WindowState(ScriptCall.num(reply, 7), ScriptCall.num(reply, 8));
            case SLIDING_WINDOW ->
                after = new SlidingWindowState(
                        ScriptCall.num(reply, 7), ScriptCall.num(reply, 8), ScriptCall.num(reply, 9));
            case SLIDING_LOG -> {
                // the live sum: what is left of the capacity, as a peek would say
                return new Settlement(
                        true, estimate, adjusted, Math.max(0, limit.capacity() - ScriptCall.num(reply, 7)));
            }
            default -> throw new IllegalStateException("unknown algorithm " + limit.algorithm());
        }
        return new Settlement(
                true,
                estimate,
                adjusted,
                Algorithms.peek(after, nowNanos, limit, 1).remaining());
    }

    /** {@code estimate·P} as the script adds it: {@code "us:frac"} ({@code us = ep / K}), saturated at 2^62. */
    private static byte[] scaled(long estimate, Limit limit) {
        long k = 1000 * limit.timeScale();
        long ep = Math.min(Exact.saturatingMultiply(estimate, limit.intervalScaled()), Limit.MAX_SCALED);
        return ((ep / k) + ":" + (ep % k)).getBytes(StandardCharsets.US_ASCII);
    }

    /** The script's {@code B'} must be the pure step's ({@link Settle#tatBacklog}). */
    private static void checkBacklog(ScriptCall call, long before, long d, long after) {
        Limit limit = call.limit(0);
        long expected = Settle.tatBacklog(before, d, limit);
        if (expected != after) {
            throw new IllegalStateException("the Redis settle script left backlog " + after + " where the rule gives "
                    + expected + " (backlog " + before + ", d " + d + ") on " + limit + " for key '"
                    + RedisKeys.abbreviate(call.userKey()) + "'; please report this as a bug");
        }
    }
}
