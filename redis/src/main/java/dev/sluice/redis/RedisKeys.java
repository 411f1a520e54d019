package dev.sluice.redis;

import dev.sluice.Limit;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;

/**
 * Where the state of (key, limit) lives in Redis: {@code prefix + limit.id() + ":" + key} when the key
 * carries a Redis Cluster hash tag, {@code prefix + limit.id() + "{" + key + "}"} when it does not (and a
 * third form, {@code prefix + limit.id() + "~{" + hash + "}" + key}, for an untagged key containing a
 * <code>}</code>, which would end a {@code {key}} tag early).
 *
 * <p>Why the braces: Redis Cluster places a key by its hash tag, the text between the first <code>{</code>
 * and the next <code>}</code>. Wrapping an untagged key in braces makes the user's key its own tag, so every
 * limit on one key lands in one slot (a multi-permit over {@code user:42}'s per-second and per-day limits
 * runs as one script), and a key that already has a tag, such as {@code {tenant-7}:user:42}, is placed by
 * that tag, so keys sharing a tag share a slot. The prefix and the limit id never contain braces. The
 * mapping is one-to-one: the limit id has a fixed shape, and the character after it ({@code :},
 * <code>{</code> or {@code ~}) says which form follows.
 *
 * <p>Keys are stored as UTF-8. A Java string with an unpaired surrogate has no UTF-8 form (it would be
 * silently replaced by {@code ?} and collide with another key), so it is rejected.
 */
final class RedisKeys {
    private RedisKeys() {}

    static byte[] of(String prefix, String key, Limit limit) {
        checkEncodable(key);
        String id = limit.id();
        StringBuilder sb = new StringBuilder(prefix.length() + id.length() + key.length() + 12);
        sb.append(prefix).append(id);
        if (hasHashTag(key)) {
            sb.append(':').append(key);
        } else if (key.indexOf('}') < 0) {
            sb.append('{').append(key).append('}');
        } else {
            // a '}' would end a {key} tag early; tag with the key's (JVM-independent) String hash instead
            sb.append("~{")
                    .append(Integer.toHexString(key.hashCode()))
                    .append('}')
                    .append(key);
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Redis's rule: a <code>{</code> followed later by a <code>}</code> with at least one character between. */
    static boolean hasHashTag(String key) {
        int open = key.indexOf('{');
        if (open < 0) {
            return false;
        }
        int close = key.indexOf('}', open + 1);
        return close > open + 1;
    }

    static int slot(byte[] redisKey) {
        return SlotHash.getSlot(redisKey);
    }

    static void checkPrefix(String prefix) {
        if (prefix == null) {
            throw new NullPointerException("keyPrefix must not be null: use \"\" for none");
        }
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("keyPrefix \"" + prefix + "\" contains a brace: braces are Redis"
                    + " Cluster hash tags and belong in keys; use a prefix without { and }, such as \"sluice:\"");
        }
        checkEncodable(prefix);
    }

    private static void checkEncodable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("key \"" + abbreviate(s) + "\" has an unpaired UTF-16 surrogate"
                        + " (0x" + Integer.toHexString(c) + ") at index " + i + ": Redis keys are stored as UTF-8,"
                        + " which cannot represent it; use valid Unicode text, or hex- or base64-encode binary keys");
            }
        }
    }

    static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "…(" + s.length() + " chars)";
    }
}
