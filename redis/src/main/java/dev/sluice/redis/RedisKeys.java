package dev.sluice.redis;

import dev.sluice.Limit;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;

/**
 * Where the state of (key, limit) lives in Redis: {@code prefix + identity + ":" + key} when the key
 * carries a Redis Cluster hash tag, {@code prefix + identity + "{" + key + "}"} when it does not (and a
 * third form, {@code prefix + identity + "~{" + hash + "}" + key}, for an untagged key containing a
 * <code>}</code>, which would end a {@code {key}} tag early). The identity is the limit's
 * ({@link Limit#identity()}): an unnamed limit's numbers ({@link Limit#id()}, such as {@code tb:10:1:1000000000}),
 * or a named limit's algorithm and name ({@code tb@api-default}), so that a named limit whose numbers change keeps
 * its state; the scripts then read it under the new numbers (the numbers it was written under are stored with it).
 * In a name, {@code %}, <code>{</code>, <code>}</code>, {@code :} and {@code ~} are written as {@code %25},
 * {@code %7B}, {@code %7D}, {@code %3A} and {@code %7E}: the identity never holds a brace (no hash tag but the
 * key's) nor the characters that end it.
 *
 * <p>Why the braces: Redis Cluster places a key by its hash tag, the text between the first <code>{</code>
 * and the next <code>}</code>. Wrapping an untagged key in braces makes the user's key its own tag, so every
 * limit on one key lands in one slot (a multi-permit over {@code user:42}'s per-second and per-day limits
 * runs as one script), and a key that already has a tag, such as {@code {tenant-7}:user:42}, is placed by
 * that tag, so keys sharing a tag share a slot. The prefix and the identity never contain braces. The
 * mapping is one-to-one: an unnamed limit's id has a fixed shape, a named limit's identity is its algorithm,
 * {@code @} and the escaped name (which holds no {@code :}, <code>{</code> or {@code ~}), and the character after it
 * ({@code :}, <code>{</code> or {@code ~}) says which form follows.
 *
 * <p>Keys are stored as UTF-8. A Java string with an unpaired surrogate has no UTF-8 form (it would be
 * silently replaced by {@code ?} and collide with another key), so it is rejected.
 */
final class RedisKeys {
    private RedisKeys() {}

    static byte[] of(String prefix, String key, Limit limit) {
        StringBuilder sb = new StringBuilder(prefix.length() + key.length() + 40);
        sb.append(prefix);
        return state(sb, key, limit).toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Where reservation {@code id} of (key, limit) waits for its settle ({@link RedisSettle}): {@code prefix + "~r:"
     * + id + ":"} and the state's key after the prefix, the id's {@code %}, <code>{</code>, <code>}</code>, {@code :}
     * and {@code ~} written as in a name. No state key has this form (an identity starts with its algorithm's
     * letters), the escaped id ends at the first {@code :} after {@code ~r:} (one record per id and state), and the
     * first brace is the state key's own, so the record has the state's hash tag: one Redis Cluster slot for both.
     */
    static byte[] pending(String prefix, String key, Limit limit, String id) {
        StringBuilder sb = new StringBuilder(prefix.length() + id.length() + key.length() + 44);
        sb.append(prefix).append("~r:");
        escape(sb, id);
        sb.append(':');
        return state(sb, key, limit).toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The slots in flight of {@code key} ({@code in_flight.lua}): {@code prefix + "in-flight" + ...} with the key
     * placed as for a limit, so the slots of a key share its hash slot. No limit's identity is {@code in-flight} (an
     * unnamed limit's id has {@code :}s, a named limit's identity an {@code @}), so slots and rate-limit state never
     * share a Redis key.
     */
    static byte[] inFlight(String prefix, String key) {
        StringBuilder sb = new StringBuilder(prefix.length() + key.length() + 24);
        sb.append(prefix);
        return tagged(sb, IN_FLIGHT, key).toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The identity part of the keys of slots in flight. */
    static final String IN_FLIGHT = "in-flight";

    /** Appends the state's key after the prefix: the limit's identity and the key (see the class comment). */
    private static StringBuilder state(StringBuilder sb, String key, Limit limit) {
        return tagged(sb, identity(limit), key);
    }

    /** Appends {@code id} and the key, placed by its hash tag (see the class comment). */
    private static StringBuilder tagged(StringBuilder sb, String id, String key) {
        checkEncodable(key);
        sb.append(id);
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
        return sb;
    }

    /** The identity part of a Redis key: {@link Limit#id()} unnamed, {@code <algorithm>@<escaped name>} named. */
    static String identity(Limit limit) {
        String name = limit.name();
        if (name == null) {
            return limit.id();
        }
        checkEncodable(name);
        StringBuilder sb = new StringBuilder(name.length() + 8);
        sb.append(limit.algorithm().shortName()).append('@');
        return escape(sb, name).toString();
    }

    /** Appends {@code s} with {@code %}, <code>{</code>, <code>}</code>, {@code :} and {@code ~} escaped. */
    private static StringBuilder escape(StringBuilder sb, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '%' -> sb.append("%25");
                case '{' -> sb.append("%7B");
                case '}' -> sb.append("%7D");
                case ':' -> sb.append("%3A");
                case '~' -> sb.append("%7E");
                default -> sb.append(c);
            }
        }
        return sb;
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
