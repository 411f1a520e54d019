package dev.sluice.redis;

import dev.sluice.Limit;
import dev.sluice.algorithm.Inheritance;
import java.nio.charset.StandardCharsets;

/**
 * A named token bucket or GCRA value written under other numbers, read under the caller's: what {@code gcra.lua}
 * leaves to the client, since its exact conversion ({@link Inheritance#tatBacklog(long, long, long)}, {@code ⌈B·P'/P⌉})
 * multiplies numbers of up to 62 bits, beyond a Lua double. The script reports the stored value
 * ({@code "tat_us:frac/numbers"}); this class converts it at the instant the script read it, and the call is repeated
 * with the stored value and its replacement: the script reads the replacement only if the key still holds exactly that
 * value (another process may have written meanwhile: then it reports the new value and the call is converted again).
 * One more round trip, once per key and change of numbers.
 */
final class GcraChange {
    private GcraChange() {}

    /** The backlog at {@code nowUs} of the stored {@code value} read under {@code to}, in {@code to}'s units. */
    static long backlog(byte[] value, long nowUs, Limit to) {
        String v = new String(value, StandardCharsets.US_ASCII);
        try {
            int colon = v.indexOf(':');
            int slash = v.indexOf('/');
            long tatUs = Long.parseLong(v, 0, colon, 10);
            long frac = Long.parseLong(v, colon + 1, slash, 10);
            // the numbers: Limit.id() of a token bucket or GCRA, "tb:capacity:timeScale:intervalScaled"
            String[] numbers = v.substring(slash + 1).split(":", -1);
            long timeScale = Long.parseLong(numbers[2]);
            long interval = Long.parseLong(numbers[3]);
            long k = Math.multiplyExact(1000L, timeScale);
            long b = tatUs > nowUs
                    ? Math.addExact(Math.multiplyExact(tatUs - nowUs, k), frac)
                    : tatUs == nowUs ? frac : 0;
            return b == 0 ? 0 : Inheritance.tatBacklog(b, interval, to.intervalScaled());
        } catch (RuntimeException e) {
            throw new IllegalStateException(
                    "SLUICECORRUPT: a token bucket value Sluice did not write: '" + RedisKeys.abbreviate(v) + "'", e);
        }
    }

    /** The value that replaces {@code value} at {@code nowUs}: its backlog under {@code to}, with {@code to}'s numbers. */
    static byte[] replacement(byte[] value, long nowUs, Limit to) {
        long b = backlog(value, nowUs, to);
        long k = 1000 * to.timeScale();
        return ((nowUs + b / k) + ":" + (b % k) + "/" + to.id()).getBytes(StandardCharsets.US_ASCII);
    }
}
