package dev.sluice.redis;

import static dev.sluice.redis.ScriptFields.STRIDE;

import dev.sluice.store.StoreClock;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** How many single-permit calls become one call of {@code batch.lua} (see its header for the layout). */
final class ScriptBatch {
    private ScriptBatch() {}

    /**
     * One {@code EVALSHA} of {@code batch.lua} for single-permit calls made at the same {@link StoreClock.Reading}
     * (and, on Redis Cluster, in one hash slot): their keys and fields one after the other, each decided on its own.
     */
    static ScriptCall of(List<ScriptCall> calls) {
        int n = calls.size();
        byte[][] keys = new byte[n][];
        // the nine fields of a decision are sent once per distinct set (most batches: one limit, one cost), and each
        // decision names its set with one character: a batch of 64 sends 64 keys and ~11 arguments, not 64 * 9
        List<byte[]> groups = new ArrayList<>(2 + STRIDE);
        groups.add(calls.get(0).argv[0]);
        groups.add(calls.get(0).argv[1]);
        byte[] groupOf = new byte[n];
        Map<ByteBuffer, Integer> firstOf = new HashMap<>(2 * n);
        byte[] shared = new byte[n];
        for (int i = 0; i < n; i++) {
            ScriptCall c = calls.get(i);
            keys[i] = c.keys[0];
            int g = 0;
            int m = (groups.size() - 2) / STRIDE;
            while (g < m && !sameFields(groups, 2 + g * STRIDE, c.argv)) {
                g++;
            }
            if (g == m) {
                for (int f = 0; f < STRIDE; f++) {
                    groups.add(c.argv[2 + f]);
                }
            }
            groupOf[i] = (byte) ('0' + g); // at most MAX_BATCH sets: '0' .. 'o'
            Integer earlier = firstOf.putIfAbsent(ByteBuffer.wrap(keys[i]), i);
            shared[i] = (byte) (earlier == null ? '0' : '1');
            if (earlier != null) {
                shared[earlier] = '1';
            }
        }
        groups.add(shared); // which decisions share their key with another (batch.lua)
        groups.add(groupOf); // the field set of each decision
        return ScriptCall.batch(keys, groups.toArray(new byte[0][]));
    }

    private static boolean sameFields(List<byte[]> groups, int at, byte[][] argv) {
        for (int f = 0; f < STRIDE; f++) {
            if (!Arrays.equals(groups.get(at + f), argv[2 + f])) {
                return false;
            }
        }
        return true;
    }
}
