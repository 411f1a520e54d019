package dev.sluice.redis;

import static dev.sluice.redis.ScriptFields.STRIDE;

import dev.sluice.store.StoreClock;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** How the calls of a batch become one call of {@code batch.lua} (see its header for the layout). */
final class ScriptBatch {
    private ScriptBatch() {}

    /**
     * One {@code EVALSHA} of {@code batch.lua} for calls made at the same {@link StoreClock.Reading} (and, on Redis
     * Cluster, in one hash slot): single-permit decisions, and other operations ({@link Coalescer.Pending#kind}), their
     * keys and arguments one after the other, each done on its own, in order.
     */
    static ScriptCall of(List<Coalescer.Pending<?>> entries) {
        int n = entries.size();
        List<byte[]> keys = new ArrayList<>(n + 1);
        // the nine fields of a decision are sent once per distinct set (most batches: one limit, one cost), and each
        // decision names its set with one character: a batch of 64 sends 64 keys and ~11 arguments, not 64 * 9
        List<byte[]> groups = new ArrayList<>(2 + STRIDE);
        groups.add(entries.get(0).call().argv[0]);
        groups.add(entries.get(0).call().argv[1]);
        // the other operations' arguments: their own script's, after the time and the least expiry
        List<byte[]> others = new ArrayList<>();
        byte[] groupOf = new byte[n];
        byte[] kinds = new byte[n];
        Map<ByteBuffer, Integer> firstOf = new HashMap<>(2 * n);
        byte[] shared = new byte[n];
        for (int i = 0; i < n; i++) {
            Coalescer.Pending<?> e = entries.get(i);
            ScriptCall c = e.call();
            kinds[i] = e.kind();
            shared[i] = '0';
            groupOf[i] = '0';
            if (e.kind() != Coalescer.DECIDE) {
                keys.addAll(Arrays.asList(c.keys));
                others.addAll(Arrays.asList(c.argv).subList(2, c.argv.length));
                continue;
            }
            keys.add(c.keys[0]);
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
            Integer earlier = firstOf.putIfAbsent(ByteBuffer.wrap(c.keys[0]), i);
            if (earlier != null) {
                shared[i] = '1';
                shared[earlier] = '1';
            }
        }
        groups.addAll(others);
        groups.add(shared); // which decisions share their key with another decision (batch.lua)
        groups.add(groupOf); // the field set of each decision
        groups.add(kinds); // what each entry is
        return ScriptCall.batch(keys.toArray(new byte[0][]), groups.toArray(new byte[0][]));
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
