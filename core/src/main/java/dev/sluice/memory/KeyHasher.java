package dev.sluice.memory;

import java.security.SecureRandom;

/**
 * SipHash-1-3 (the keyed hash Rust's HashMap uses against hash flooding) of a key's UTF-16 code units
 * and a limit identity's number, with a 128-bit secret drawn per limiter. An attacker who does not know the secret
 * cannot craft keys that collide, so a flood of chosen keys degrades to a flood of random ones.
 *
 * <p>Sluice keeps the 64-bit hash instead of the key string. Two distinct (key, limit) pairs whose hashes
 * collide would share a bucket; for {@code n} tracked keys the odds that any two collide are about
 * {@code n² / 2^65}: one in 37 million at a million keys.
 */
final class KeyHasher {
    private final long k0;
    private final long k1;

    KeyHasher() {
        SecureRandom random = new SecureRandom();
        this.k0 = random.nextLong();
        this.k1 = random.nextLong();
    }

    /** With a given secret: for tests. */
    KeyHasher(long k0, long k1) {
        this.k0 = k0;
        this.k1 = k1;
    }

    long hash(String key, int limitIdentity) {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        int n = key.length();
        int i = -4; // the first block is the limit index, then the key's characters four at a time
        for (; i + 4 <= n; i += 4) {
            long m = i < 0
                    ? limitIdentity
                    : key.charAt(i)
                            | (long) key.charAt(i + 1) << 16
                            | (long) key.charAt(i + 2) << 32
                            | (long) key.charAt(i + 3) << 48;
            v3 ^= m;
            // one compression round (SipHash-1-3)
            v0 += v1;
            v1 = Long.rotateLeft(v1, 13);
            v1 ^= v0;
            v0 = Long.rotateLeft(v0, 32);
            v2 += v3;
            v3 = Long.rotateLeft(v3, 16);
            v3 ^= v2;
            v0 += v3;
            v3 = Long.rotateLeft(v3, 21);
            v3 ^= v0;
            v2 += v1;
            v1 = Long.rotateLeft(v1, 17);
            v1 ^= v2;
            v2 = Long.rotateLeft(v2, 32);
            v0 ^= m;
        }
        long last = (long) n << 56;
        for (int shift = 0; i < n; i++, shift += 16) {
            last |= (long) key.charAt(i) << shift;
        }
        v3 ^= last;
        v0 += v1;
        v1 = Long.rotateLeft(v1, 13);
        v1 ^= v0;
        v0 = Long.rotateLeft(v0, 32);
        v2 += v3;
        v3 = Long.rotateLeft(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = Long.rotateLeft(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = Long.rotateLeft(v1, 17);
        v1 ^= v2;
        v2 = Long.rotateLeft(v2, 32);
        v0 ^= last;
        v2 ^= 0xff;
        for (int r = 0; r < 3; r++) {
            v0 += v1;
            v1 = Long.rotateLeft(v1, 13);
            v1 ^= v0;
            v0 = Long.rotateLeft(v0, 32);
            v2 += v3;
            v3 = Long.rotateLeft(v3, 16);
            v3 ^= v2;
            v0 += v3;
            v3 = Long.rotateLeft(v3, 21);
            v3 ^= v0;
            v2 += v1;
            v1 = Long.rotateLeft(v1, 17);
            v1 ^= v2;
            v2 = Long.rotateLeft(v2, 32);
        }
        long h = v0 ^ v1 ^ v2 ^ v3;
        return h == 0 ? 1 : h; // 0 marks an empty slot
    }
}
