package dev.sluice.memory;

import dev.sluice.Limit;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * The keyed call's shortcut for the keys it is called with most: a small direct-mapped table of {@link MemoryBound}
 * handles, so that a key called again skips what a handle resolves once (its limit's registration, its SipHash, the
 * lookup of its slot) and decides as {@link MemoryBound} does.
 *
 * <p>The table is indexed by the key's {@link String#hashCode()} (cached in the string, so free for a key that is
 * kept) and its limit's hash. A hit needs an equal key under an equal limit, so two keys that collide here, even
 * keys crafted to (the String hash is not secret), only cost a miss: where a key's state lives is still decided by
 * its SipHash ({@link KeyHasher}), and no two keys ever share a handle. A miss puts the key's handle in its entry one
 * time in {@value #ADMIT_ONE_IN}, at random: a key called often is in after a few dozen calls, and a flood of distinct
 * keys costs a handle every {@value #ADMIT_ONE_IN} calls, not every call. Keys over
 * {@value #MAX_KEY_LENGTH} characters are never kept. At most {@value #SIZE} handles (and their key strings) are
 * held; entries are replaced, never removed: a handle whose key was evicted or reset finds its slot dead and looks
 * the key up again, as any handle does.
 *
 * <p>Entries are written and read without locks: a handle's fields are final (its remembered slot is checked before
 * it is used), so a thread that sees a handle sees it whole.
 */
final class HotKeys {
    static final int SIZE = 256;
    static final int ADMIT_ONE_IN = 64;
    static final int MAX_KEY_LENGTH = 256;

    private final MemoryBound[] handles = new MemoryBound[SIZE];
    /**
     * The String hash of each entry's key, beside the entries: a miss is told from this small array alone, which
     * stays in the CPU's cache, without loading the handle (on a workload of many keys, a cache miss of its own).
     * Written after the entry; a stale value only turns a hit into a miss or sends the lookup on to the handle's own
     * check.
     */
    private final int[] keyHashes = new int[SIZE];

    /** The handle of {@code key} under {@code limit} if it is kept, else null. */
    @Nullable
    MemoryBound get(String key, Limit limit) {
        if (key.length() > MAX_KEY_LENGTH) {
            return null; // never kept: not worth hashing up to 4,096 characters to find that out
        }
        int keyHash = key.hashCode();
        int i = index(keyHash, limit);
        if (keyHashes[i] != keyHash) {
            return null;
        }
        MemoryBound b = handles[i];
        if (b != null && b.keyHash == keyHash && b.limit().equals(limit)) {
            if (b.key().equals(key)) { // String.equals checks identity first
                return b;
            }
        }
        return null;
    }

    /** After a miss: whether to keep this key's handle now (one miss in {@value #ADMIT_ONE_IN}, at random). */
    static boolean admit(String key) {
        return key.length() <= MAX_KEY_LENGTH && ThreadLocalRandom.current().nextInt(ADMIT_ONE_IN) == 0;
    }

    void put(MemoryBound b) {
        int i = index(b.keyHash, b.limit());
        handles[i] = b;
        keyHashes[i] = b.keyHash;
    }

    static int index(int keyHash, Limit limit) {
        return ((keyHash ^ limit.hashCode()) * 0x9E3779B9) >>> (32 - Integer.numberOfTrailingZeros(SIZE));
    }
}
