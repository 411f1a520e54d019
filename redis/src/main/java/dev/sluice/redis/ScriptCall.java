package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.algorithm.FixedWindow;
import dev.sluice.algorithm.Gcra;
import dev.sluice.algorithm.SlidingLog;
import dev.sluice.algorithm.SlidingWindow;
import dev.sluice.algorithm.SlidingWindowState;
import dev.sluice.algorithm.Step;
import dev.sluice.algorithm.TatState;
import dev.sluice.algorithm.WindowState;
import dev.sluice.store.StoreClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One {@code EVALSHA}: the KEYS and ARGV of a request (see {@code common.lua} for the layout) and how to
 * turn the script's reply into a {@link Decision}.
 *
 * <p>The script decides and writes; the Decision's durations are then computed here, in Java, by running
 * the pure step of {@code dev.sluice.algorithm} on the very state the script saw at the very instant it
 * used. That keeps every nanosecond field identical to the reference steps without doing 64-bit
 * arithmetic in Lua, and the script's verdict is checked against the step's: they must agree.
 */
final class ScriptCall {

    private static final int STRIDE = ScriptFields.STRIDE;

    final byte[][] keys;
    final byte[][] argv;
    final LuaScripts.Script script;
    private final String[] userKeys;
    private final Limit[] limits;
    private final long[] costs;
    private final long maxWaitNanos; // -1: tryAcquire

    private ScriptCall(
            String[] userKeys,
            byte[][] keys,
            Limit[] limits,
            long[] costs,
            long maxWaitNanos,
            StoreClock.Reading now,
            long minTtlMillis,
            boolean peek) {
        this.userKeys = userKeys;
        this.keys = keys;
        this.limits = limits;
        this.costs = costs;
        this.maxWaitNanos = maxWaitNanos;
        int n = keys.length;
        this.argv = new byte[2 + STRIDE * n][];
        // the wire form of the time: empty for Redis's own TIME, else the client's epoch microseconds
        argv[0] = now.store() ? ScriptFields.EMPTY : ScriptFields.ascii(Math.floorDiv(now.clientNanos(), 1000L));
        argv[1] = ScriptFields.ascii(minTtlMillis);
        Algorithm first = limits[0].algorithm();
        boolean same = true;
        for (int i = 0; i < n; i++) {
            System.arraycopy(ScriptFields.fields(limits[i], costs[i], maxWaitNanos), 0, argv, 2 + i * STRIDE, STRIDE);
            same &= LuaScripts.INSTANCE.forAlgorithm(limits[i].algorithm()) == LuaScripts.INSTANCE.forAlgorithm(first);
        }
        this.script = peek
                ? LuaScripts.INSTANCE.peek
                : same ? LuaScripts.INSTANCE.forAlgorithm(first) : LuaScripts.INSTANCE.mixed;
    }

    static ScriptCall of(
            String prefix,
            String[] userKeys,
            Limit[] limits,
            long[] costs,
            long maxWaitNanos,
            StoreClock.Reading now,
            long minTtlMillis) {
        byte[][] keys = new byte[userKeys.length][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = RedisKeys.of(prefix, userKeys[i], limits[i]);
            for (int j = 0; j < i; j++) {
                if (Arrays.equals(keys[i], keys[j]) && !limits[i].equals(limits[j])) {
                    throw new IllegalArgumentException("multi-permit names key '" + RedisKeys.abbreviate(userKeys[i])
                            + "' twice under limit " + limits[i].describe() + " with other numbers (" + limits[j]
                            + " and " + limits[i] + "): give each permit of one named limit the same numbers");
                }
            }
        }
        return new ScriptCall(userKeys, keys, limits, costs, maxWaitNanos, now, minTtlMillis, false);
    }

    /**
     * The script reported a token bucket value written under other numbers ({@code gcra.lua}): the call is repeated
     * ({@link #reading}), reading the value {@link GcraChange converted} in its place if the key still holds it.
     */
    static final class Changed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        /** 0-based. */
        final int permit;

        @SuppressWarnings("serial")
        final byte[] value;

        final long nowUs;

        /** Null, or the call's last arguments to send instead (a settle's record under other numbers). */
        @SuppressWarnings("serial")
        final byte @Nullable [][] last;

        Changed(int permit, byte[] value, long nowUs) {
            super("a limit's numbers changed", null, false, false);
            this.permit = permit;
            this.value = value;
            this.nowUs = nowUs;
            this.last = null;
        }

        /** The call is to be repeated with its last arguments replaced by {@code last}. */
        Changed(byte[]... last) {
            super("a limit's numbers changed", null, false, false);
            this.permit = -1;
            this.value = ScriptFields.EMPTY;
            this.nowUs = 0;
            this.last = last;
        }
    }

    /** This call again, reading the value that {@code changed} reports converted in its place. */
    ScriptCall reading(Changed changed) {
        byte[][] last = changed.last;
        return last != null ? replacingLast(last) : reading(changed.permit, changed.value, changed.nowUs);
    }

    /** This call again, permit {@code i} (0-based) reading {@code value}, read at {@code nowUs}, under its numbers. */
    ScriptCall reading(int i, byte[] value, long nowUs) {
        byte[][] a = argv.clone();
        a[2 + i * STRIDE + 7] = value;
        a[2 + i * STRIDE + 8] = GcraChange.replacement(value, nowUs, limits[i]);
        return new ScriptCall(this, a);
    }

    private ScriptCall(ScriptCall from, byte[][] argv) {
        this(from, from.keys, argv, from.script);
    }

    private ScriptCall(ScriptCall from, byte[][] keys, byte[][] argv, LuaScripts.Script script) {
        this.userKeys = from.userKeys;
        this.keys = keys;
        this.limits = from.limits;
        this.costs = from.costs;
        this.maxWaitNanos = from.maxWaitNanos;
        this.script = script;
        this.argv = argv;
    }

    /**
     * This single-permit call as {@code script}, with one more key (after the permit's) and more arguments (after
     * the permit's fields): the reservation scripts ({@link RedisSettle}), whose reply starts as {@code run.lua}'s.
     */
    ScriptCall with(LuaScripts.Script script, byte[] key, byte[]... more) {
        byte[][] a = Arrays.copyOf(argv, argv.length + more.length);
        System.arraycopy(more, 0, a, argv.length, more.length);
        return new ScriptCall(this, new byte[][] {keys[0], key}, a, script);
    }

    /** This call with its last {@code more.length} arguments replaced. */
    private ScriptCall replacingLast(byte[]... more) {
        byte[][] a = argv.clone();
        System.arraycopy(more, 0, a, a.length - more.length, more.length);
        return new ScriptCall(this, a);
    }

    /** One script for every permit of a multi-permit request (checked: {@link Permit#checkAll}). */
    static ScriptCall of(String prefix, List<Permit> permits, StoreClock.Reading now, long minTtlMillis) {
        int n = permits.size();
        String[] keys = new String[n];
        Limit[] limits = new Limit[n];
        long[] costs = new long[n];
        for (int i = 0; i < n; i++) {
            Permit p = permits.get(i);
            ScriptFields.checkExact(p.limit());
            keys[i] = p.key();
            limits[i] = p.limit();
            costs[i] = p.cost();
        }
        return of(prefix, keys, limits, costs, -1, now, minTtlMillis);
    }

    /**
     * On Redis Cluster a script's keys must share a hash slot: refuses a multi-permit whose keys do not, naming two
     * of them and the fix.
     */
    void checkOneSlot() {
        int slot = RedisKeys.slot(keys[0]);
        for (int i = 1; i < keys.length; i++) {
            int s = RedisKeys.slot(keys[i]);
            if (s != slot) {
                throw new IllegalArgumentException("multi-permit keys '" + RedisKeys.abbreviate(userKeys[0]) + "' and '"
                        + RedisKeys.abbreviate(userKeys[i]) + "' hash to different Redis Cluster slots (" + slot
                        + " and "
                        + s + "): a multi-permit runs as one script, which Redis Cluster allows within one slot only;"
                        + " give the keys a common hash tag, e.g. '{user42}:ip' and '{user42}:account'");
            }
        }
    }

    /** A read-only call of {@code peek.lua}: reports the key's state, writes nothing (decided by {@link #peek}). */
    static ScriptCall peek(String prefix, String userKey, Limit limit, long cost, StoreClock.Reading now) {
        return new ScriptCall(
                new String[] {userKey},
                new byte[][] {RedisKeys.of(prefix, userKey, limit)},
                new Limit[] {limit},
                new long[] {cost},
                -1,
                now,
                0,
                true);
    }

    /** The Decision of each permit, from the reply {@code {now_us, committed, (allowed, s1, s2, s3)...}}. */
    List<Decision> decisions(List<Object> reply) {
        long nowNanos = num(reply, 0) * 1000;
        if (num(reply, 1) == -3) {
            throw new Changed((int) num(reply, 2) - 1, bytes(reply, 3), num(reply, 0));
        }
        boolean committed = num(reply, 1) == 1;
        List<Decision> out = new ArrayList<>(limits.length);
        boolean all = true;
        for (int i = 0; i < limits.length; i++) {
            Decision d = decideAt(reply, 2 + 4 * i, i, nowNanos);
            all &= d.allowed();
            out.add(d);
        }
        if (all != committed) {
            throw new IllegalStateException("the Redis script " + (committed ? "committed" : "did not commit")
                    + " a request whose permits were " + (all ? "all allowed" : "not all allowed")
                    + "; please report this");
        }
        return out;
    }

    /**
     * The Decision of permit {@code i}, from its four reply elements at {@code r}: {@code allowed, s1, s2, s3};
     * the script's verdict must be the pure step's.
     */
    Decision decideAt(List<Object> reply, int r, int i, long nowNanos) {
        boolean allowed = num(reply, r) == 1;
        Decision d = decide(limits[i], costs[i], nowNanos, num(reply, r + 1), num(reply, r + 2), num(reply, r + 3));
        if (d.allowed() != allowed) {
            throw new IllegalStateException("the Redis script and the reference step disagree on "
                    + limits[i] + " for key '" + RedisKeys.abbreviate(userKeys[i]) + "' at " + nowNanos
                    + " ns: script " + (allowed ? "allowed" : "denied") + ", step " + d
                    + "; please report this as a bug");
        }
        return d;
    }

    /** A call of {@code batch.lua} ({@link ScriptBatch}): only its keys, fields and script. */
    static ScriptCall batch(byte[][] keys, byte[][] argv) {
        return new ScriptCall(LuaScripts.INSTANCE.batch, keys, argv);
    }

    /** A call of another script than the algorithms' (its caller decodes the reply): its keys and fields. */
    static ScriptCall of(LuaScripts.Script script, byte[][] keys, byte[][] argv) {
        return new ScriptCall(script, keys, argv);
    }

    /** A batch or another script: only its keys, fields and script; its caller decodes the reply. */
    private ScriptCall(LuaScripts.Script script, byte[][] keys, byte[][] argv) {
        this.keys = keys;
        this.argv = argv;
        this.script = script;
        this.userKeys = new String[0];
        this.limits = new Limit[0];
        this.costs = new long[0];
        this.maxWaitNanos = -1;
    }

    /** The Redis Cluster hash slot of this single-permit call's key. */
    int slot() {
        return RedisKeys.slot(keys[0]);
    }

    /** The Decision of a single-permit call. */
    Decision single(List<Object> reply) {
        return decisions(reply).get(0);
    }

    private Decision decide(Limit limit, long cost, long nowNanos, long s1, long s2, long s3) {
        switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA: {
                long backlog = s1 * (1000 * limit.timeScale()) + s2;
                TatState state = new TatState(backlog, nowNanos);
                Step step = maxWaitNanos >= 0
                        ? Gcra.reserve(state, nowNanos, limit, cost, maxWaitNanos)
                        : Gcra.tryAcquire(state, nowNanos, limit, cost);
                return step.decision();
            }
            case FIXED_WINDOW: {
                WindowState state = s1 < 0 ? WindowState.FRESH : new WindowState(s1, s2);
                return FixedWindow.tryAcquire(state, nowNanos, limit, cost).decision();
            }
            case SLIDING_WINDOW: {
                SlidingWindowState state = s1 < 0 ? SlidingWindowState.FRESH : new SlidingWindowState(s1, s2, s3);
                return SlidingWindow.tryAcquire(state, nowNanos, limit, cost).decision();
            }
            case SLIDING_LOG:
            default:
                // s1 = live sum, s2 = time_us of the entry whose leaving admits the call, s3 = newest time_us
                return SlidingLog.decide(s1, s2 * 1000, s3 * 1000, nowNanos, limit, cost);
        }
    }

    /** The user's key of the first permit. */
    String userKey() {
        return userKeys[0];
    }

    byte[] key(int i) {
        return keys[i];
    }

    Limit limit(int i) {
        return limits[i];
    }

    long cost(int i) {
        return costs[i];
    }

    int permits() {
        return limits.length;
    }

    /** The user's key of permit {@code i} (1-based, as the scripts number them) for error messages. */
    String describePermit(int oneBased) {
        int i = oneBased - 1;
        if (i == limits.length && i < keys.length) { // a reservation script's record (see RedisSettle)
            return "Redis key '" + RedisKeys.abbreviate(new String(keys[i], StandardCharsets.UTF_8))
                    + "' (the pending reservation of key '" + RedisKeys.abbreviate(userKeys[0]) + "')";
        }
        if (i < 0 || i >= limits.length) {
            return "a key of this request";
        }
        return "Redis key '" + RedisKeys.abbreviate(new String(keys[i], StandardCharsets.UTF_8)) + "' (key '"
                + RedisKeys.abbreviate(userKeys[i]) + "', limit " + limits[i].describe() + ")";
    }

    static long num(List<Object> reply, int i) {
        Object o = reply.get(i);
        if (o instanceof Long l) {
            return l;
        }
        throw new IllegalStateException("unexpected reply element " + i + " from the Sluice script: " + o);
    }

    /** Element {@code i} of a reply: an array (another script's reply within {@code batch.lua}'s). */
    @SuppressWarnings("unchecked")
    static List<Object> list(List<Object> reply, int i) {
        Object o = reply.get(i);
        if (o instanceof List<?> l) {
            return (List<Object>) l;
        }
        throw new IllegalStateException("unexpected reply element " + i + " from the Sluice script: " + o);
    }

    static byte[] bytes(List<Object> reply, int i) {
        Object o = reply.get(i);
        if (o instanceof byte[] b) {
            return b;
        }
        throw new IllegalStateException("unexpected reply element " + i + " from the Sluice script: " + o);
    }
}
