package dev.sluice.memory;

import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Frees about an eighth of a full segment, under its monitor: first every key whose state equals a fresh key's
 * (forgetting it changes no decision), then, if that is not enough, the keys closest to fresh (the least recently
 * admitted), found from a random sample of 64 slots. A slot a multi-permit request holds is never evicted.
 */
final class Eviction {
    private Eviction() {}

    /** Kills slots of {@code s} holding {@code live} of at most {@code maxLive} keys; returns how many it killed. */
    static int evict(Slots s, long now, int live, int maxLive, LimitRegistry limits) {
        int target = Math.max(1, maxLive / 8);
        int killed = killWhere(s, now, 0, Integer.MAX_VALUE, limits);
        if (killed >= target) {
            return killed;
        }
        long[] sample = new long[64];
        int n = 0;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int tries = 0; n < sample.length && tries < 4 * sample.length; tries++) {
            int i = random.nextInt(s.capacity);
            long v = s.untilFresh(i, now, limits.get(s.limits[i]));
            if (v >= 0) {
                sample[n++] = v;
            }
        }
        Arrays.sort(sample, 0, n);
        int left = live - killed;
        long cut = n == 0
                ? Long.MAX_VALUE
                : sample[Math.min(n - 1, (int) ((long) n * (target - killed) / Math.max(1, left)))];
        killed += killWhere(s, now, cut, target - killed, limits);
        if (killed == 0) {
            killed += killWhere(s, now, Long.MAX_VALUE, 1, limits);
        }
        return killed;
    }

    /** Kills up to {@code max} live, unheld slots whose time to fresh is at most {@code cut}; returns how many. */
    private static int killWhere(Slots s, long now, long cut, int max, LimitRegistry limits) {
        int killed = 0;
        for (int i = 0; i < s.capacity && killed < max; i++) {
            if (s.keys[i] == 0) {
                continue;
            }
            RegisteredLimit r = limits.get(s.limits[i]);
            long v = s.untilFresh(i, now, r);
            if (v >= 0 && v <= cut && s.kill(i, false, r) != null) {
                killed++;
            }
        }
        return killed;
    }
}
