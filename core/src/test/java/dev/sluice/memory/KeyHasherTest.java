package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The key hash pinned: a fixed secret, keys of 0 to 16 characters (every length of the last block, surrogates), three
 * limit indexes, and the values this implementation gives. A rewrite (for speed, or to fold its rounds into one loop)
 * must keep every one.
 */
class KeyHasherTest {

    @Test
    void theHashOfAKeyAndLimitIsPinned() {
        KeyHasher h = new KeyHasher(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);
        check(h, "", 0, 0x79291c7a4c691902L);
        check(h, "", 5, 0xa3ec2c33897b99afL);
        check(h, "", -1, 0xf4150898eee4d79fL);
        check(h, "a", 0, 0x3e25c7eb8a9fbc3cL);
        check(h, "a", 5, 0x7d1654933bc29a7cL);
        check(h, "a", -1, 0x5f28d2a102723ab4L);
        check(h, "ab", 0, 0xc1f7c3e9c0e55b2cL);
        check(h, "ab", 5, 0xb52ba27e2b15da47L);
        check(h, "ab", -1, 0x9392b99200a45df7L);
        check(h, "abc", 0, 0x88b9ad8fde706467L);
        check(h, "abc", 5, 0xb85925879956ef64L);
        check(h, "abc", -1, 0xa995fd0535556ce5L);
        check(h, "abcd", 0, 0xf95b772651f49f44L);
        check(h, "abcd", 5, 0xf929ea6b44c3aaa0L);
        check(h, "abcd", -1, 0x3a9bd1aa05af722aL);
        check(h, "abcde", 0, 0x8afde86074955ec3L);
        check(h, "abcde", 5, 0x9df75c5dd4cba994L);
        check(h, "abcde", -1, 0x80c7aa138eb47701L);
        check(h, "user:42", 0, 0xc3a6d9920a445f3L);
        check(h, "user:42", 5, 0xdbb5199b7c6f9b87L);
        check(h, "user:42", -1, 0x160c7d61f118c5f7L);
        check(h, "user:12345678", 0, 0xdb9b6f5bf3aa2223L);
        check(h, "user:12345678", 5, 0x99be779e68c4f79cL);
        check(h, "user:12345678", -1, 0xc8e4260cbc9623c3L);
        check(h, "\u00e9t\u00e9 \ud83d\ude00", 0, 0xbec0de29745c551aL);
        check(h, "\u00e9t\u00e9 \ud83d\ude00", 5, 0x6973cfacae72f20eL);
        check(h, "\u00e9t\u00e9 \ud83d\ude00", -1, 0xe84a4ef059ada887L);
        check(h, "0123456789abcdef", 0, 0x89654f022542894cL);
        check(h, "0123456789abcdef", 5, 0xeb33bf18bcc27be6L);
        check(h, "0123456789abcdef", -1, 0x4f61ccfafa8b13e1L);
    }

    @Test
    void theSecretChangesTheHash() {
        KeyHasher a = new KeyHasher(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);
        KeyHasher b = new KeyHasher(0x0706050403020101L, 0x0f0e0d0c0b0a0908L);
        assertThat(a.hash("user:42", 0)).isNotEqualTo(b.hash("user:42", 0));
        assertThat(new KeyHasher().hash("user:42", 0)).isNotZero();
    }

    private static void check(KeyHasher h, String key, int limitIndex, long expected) {
        assertThat(h.hash(key, limitIndex)).as("\"%s\", %d", key, limitIndex).isEqualTo(expected);
    }
}
