package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.algorithm.InFlightSlots;
import dev.sluice.store.StoreClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Work in flight on Redis ({@link dev.sluice.redis.RedisRateLimiter#inFlight()}): each operation is one run of
 * {@code in_flight.lua} on the key's sorted set of (holder, lease end), which drops the ended leases,
 * decides and writes atomically, and sets the key's {@code PEXPIRE} to its latest lease, so a key whose holders all
 * died is forgotten by Redis itself. Time is Redis's {@code TIME} (or the limiter's test ticker), to the microsecond;
 * a lease is rounded up to the microsecond, so it never ends early. The key lives beside the rate-limit keys under its
 * own identity ({@link RedisKeys#inFlight}), in the user key's hash slot. The calls share the limiter's connection,
 * time budget and failures, and its batches: under load a step travels in one {@code batch.lua} call with the
 * limiter's decisions, estimates and settles ({@link Coalescer}), done in arrival order as if it went alone.
 */
final class RedisInFlight implements InFlightLimiter {
    private static final byte[] ACQUIRE = {'a'};
    private static final byte[] RELEASE = {'r'};
    private static final byte[] RENEW = {'n'};

    private final RedisCalls calls;
    private final StoreClock clock;
    private final String prefix;
    private final byte[] minTtlMillis;

    RedisInFlight(RedisCalls calls, StoreClock clock, String prefix, long minTtlMillis) {
        this.calls = calls;
        this.clock = clock;
        this.prefix = prefix;
        this.minTtlMillis = ScriptFields.ascii(minTtlMillis);
    }

    @Override
    public Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease) {
        return calls.await(acquireCall(key, maxInFlight, holder, lease));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, long maxInFlight, String holder, Duration lease) {
        return async(acquireCall(key, maxInFlight, holder, lease));
    }

    @Override
    public boolean release(String key, String holder) {
        return calls.await(releaseCall(key, holder));
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
        return async(releaseCall(key, holder));
    }

    @Override
    public boolean renew(String key, String holder, Duration lease) {
        return calls.await(renewCall(key, holder, lease));
    }

    @Override
    public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
        return async(renewCall(key, holder, lease));
    }

    private ScriptRunner.Call<Decision> acquireCall(String key, long max, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkAcquire(key, max, holder, lease);
        return run(key, ACQUIRE, holder, micros(leaseNanos), ScriptFields.ascii(max), reply -> {
            long nowNanos = ScriptCall.num(reply, 0) * 1000;
            return InFlightSlots.decision(
                    ScriptCall.num(reply, 1) == 1,
                    max,
                    ScriptCall.num(reply, 2),
                    ScriptCall.num(reply, 3) * 1000,
                    ScriptCall.num(reply, 4) * 1000,
                    nowNanos);
        });
    }

    private ScriptRunner.Call<Boolean> releaseCall(String key, String holder) {
        InFlightSlots.checkRelease(key, holder);
        return run(
                key, RELEASE, holder, ScriptFields.EMPTY, ScriptFields.EMPTY, reply -> ScriptCall.num(reply, 1) == 1);
    }

    private ScriptRunner.Call<Boolean> renewCall(String key, String holder, Duration lease) {
        long leaseNanos = InFlightSlots.checkRenew(key, holder, lease);
        return run(key, RENEW, holder, micros(leaseNanos), ScriptFields.EMPTY, reply -> ScriptCall.num(reply, 1) == 1);
    }

    /**
     * One {@code in_flight.lua} call (see its header for KEYS and ARGV), unless the limiter is closed: through the
     * limiter's batches, as its decisions.
     */
    private <T> ScriptRunner.Call<T> run(
            String key, byte[] op, String holder, byte[] leaseMicros, byte[] max, Function<List<Object>, T> finish) {
        byte[][] keys = {RedisKeys.inFlight(prefix, key)};
        StoreClock.Reading now = clock.read();
        byte[] nowMicros =
                now.store() ? ScriptFields.EMPTY : ScriptFields.ascii(Math.floorDiv(now.clientNanos(), 1000L));
        byte[][] argv = {nowMicros, minTtlMillis, op, holder.getBytes(StandardCharsets.US_ASCII), leaseMicros, max};
        return calls.submit(Coalescer.IN_FLIGHT, ScriptCall.of(LuaScripts.INSTANCE.inFlight, keys, argv), finish);
    }

    /** A lease in whole microseconds, rounded up: a lease never ends before it was asked to. */
    private static byte[] micros(long leaseNanos) {
        return ScriptFields.ascii(Math.floorDiv(leaseNanos + 999, 1000L));
    }

    private <T> CompletableFuture<T> async(ScriptRunner.Call<T> call) {
        return calls.withDeadline(call);
    }
}
