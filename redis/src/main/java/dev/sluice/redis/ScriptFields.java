package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.algorithm.Exact;
import dev.sluice.algorithm.Gcra;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The ARGV fields of one permit, as the scripts read them ({@code common.lua} and each algorithm's header): the
 * algorithm's code and numbers in the forms Lua computes with exactly, the numbers of a named limit, and the limits
 * whose arithmetic would not stay exact in Lua, refused before anything is sent.
 */
final class ScriptFields {
    private ScriptFields() {}

    /** Lua doubles are exact below 2^53; the scripts keep every quantity they compute under it. */
    static final long LUA_EXACT = 1L << 53;

    /** Fields per permit. */
    static final int STRIDE = 9;

    static final byte[] EMPTY = new byte[0];

    /**
     * Checks that a limit's arithmetic stays exact in Lua (see the class comments of the scripts), before
     * anything is sent.
     */
    static void checkExact(Limit limit) {
        if (limit.algorithm().isTat()) {
            // frac < K and frac + frac' < 2K must stay exact
            if (limit.timeScale() > (LUA_EXACT / 2) / 1000) {
                throw new IllegalArgumentException("rate " + limit.rate() + " of limit " + limit.describe()
                        + " needs " + limit.timeScale() + " time units per nanosecond (permits / gcd(permits, period"
                        + " ns)), more than the Redis store computes exactly (" + (LUA_EXACT / 2) / 1000
                        + "): use a rate whose permits share more factors with its period, e.g. a round number");
            }
        } else if (limit.algorithm() != Algorithm.SLIDING_LOG) {
            long w = limit.periodNanos();
            if (w % 1000 != 0 && w >= LUA_EXACT / 5) {
                throw new IllegalArgumentException("window " + w + " ns of limit " + limit.describe()
                        + " is not a whole number of microseconds and longer than " + (LUA_EXACT / 5 - 1)
                        + " ns (about 20 days): the Redis store keeps time in microseconds and computes such a"
                        + " window exactly only up to that length; round the window to whole microseconds");
            }
        }
    }

    /**
     * The nine ARGV fields of one permit. Those of a plain {@code tryAcquire} of cost 1, the common case, are
     * encoded once per limit and shared (Lettuce only reads them).
     */
    static byte[][] fields(Limit limit, long cost, long maxWait) {
        if (cost != 1 || maxWait >= 0) {
            return encode(limit, cost, maxWait);
        }
        byte[][] f = UNIT_COST.get(limit);
        if (f == null) {
            f = encode(limit, 1, -1);
            if (UNIT_COST.size() < UNIT_COST_LIMITS) {
                UNIT_COST.putIfAbsent(limit, f);
            }
        }
        return f;
    }

    private static final int UNIT_COST_LIMITS = 4096;
    private static final ConcurrentHashMap<Limit, byte[][]> UNIT_COST = new ConcurrentHashMap<>();

    private static byte[][] encode(Limit limit, long cost, long maxWait) {
        byte[][] argv = new byte[STRIDE][];
        int b = 0;
        // a named limit's numbers, stored beside its state (see common.lua); no value to read instead of the stored one
        argv[b + 6] = limit.name() == null ? EMPTY : limit.id().getBytes(StandardCharsets.US_ASCII);
        argv[b + 7] = EMPTY;
        argv[b + 8] = EMPTY;
        switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> {
                long k = 1000 * limit.timeScale();
                long qp = cost * limit.intervalScaled();
                long bound = limit.capacityScaled();
                if (maxWait >= 0) {
                    bound += Gcra.maxWaitScaled(maxWait, limit);
                }
                argv[b] = ascii('g');
                argv[b + 1] = ascii(qp / k);
                argv[b + 2] = ascii(qp % k);
                argv[b + 3] = ascii(bound / k);
                argv[b + 4] = ascii(bound % k);
                argv[b + 5] = ascii(k);
            }
            case FIXED_WINDOW, SLIDING_WINDOW -> {
                long w = limit.periodNanos();
                boolean micros = w % 1000 == 0;
                argv[b] = ascii(limit.algorithm() == Algorithm.FIXED_WINDOW ? 'f' : 's');
                argv[b + 1] = ascii(cost);
                argv[b + 2] = ascii(limit.capacity());
                argv[b + 3] = ascii(micros ? 1000 : 1);
                argv[b + 4] = ascii(micros ? w / 1000 : w);
                argv[b + 5] = ascii(0);
            }
            case SLIDING_LOG -> {
                long w = limit.periodNanos();
                argv[b] = ascii('l');
                argv[b + 1] = ascii(cost);
                argv[b + 2] = ascii(limit.capacity());
                argv[b + 3] = ascii(Exact.ceilDiv(w, 1000));
                argv[b + 4] = ascii(Exact.ceilDiv(w, 1_000_000));
                argv[b + 5] = ascii(0);
            }
        }
        return argv;
    }

    static byte[] ascii(long v) {
        return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] ascii(char c) {
        return new byte[] {(byte) c};
    }
}
