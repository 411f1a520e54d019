package dev.sluice.server.config;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One {@code descriptors:} list, indexed for envoyproxy/ratelimit's lookup of a request entry {@code (key, value)}
 * (its {@code GetLimit}), in this order:
 * <ol>
 *   <li>{@link #exact}: the entry whose composite ({@link DescriptorNode#composite()}) equals the request's
 *       {@code key + "_" + value};</li>
 *   <li>{@link #wildcard}: else the first wildcard entry, in file order, whose pattern matches the request's
 *       {@code key_value} (each {@code *} matches any run of characters, zero included);</li>
 *   <li>{@link #keyOnly}: else the entry whose composite equals the request's key (normally the key-only entry).</li>
 * </ol>
 * Like envoy, entries are told apart by their composite string alone: {@code key: a, value: b_c} and
 * {@code key: a_b, value: c} are the same entry ({@code a_b_c}), so a level may hold only one of them, and a request
 * entry {@code (a_b, c)} matches either.
 *
 * <p>Lookups allocate nothing: the composites are in an open-addressing table probed with the hash of the request's
 * {@code key + "_" + value} computed from the hashes of its parts, and wildcard patterns are split on {@code *} once,
 * at load, and matched against {@code key_value} without building it.
 */
public final class DescriptorLevel {
    static final DescriptorLevel EMPTY = new DescriptorLevel();

    /** The entries by composite: open addressing, linear probing, at most half full. */
    private String[] composites = new String[8];

    private DescriptorNode[] nodes = new DescriptorNode[8];
    private int size;
    /** The wildcard entries, in file order. */
    private final List<Wildcard> wildcards = new ArrayList<>();

    /** A wildcard entry's composite split on {@code *} (at least two parts), and the sum of the parts' lengths. */
    private static final class Wildcard {
        final DescriptorNode node;
        final String[] parts;
        final int fixedLength;

        Wildcard(DescriptorNode node, String[] parts, int fixedLength) {
            this.node = node;
            this.parts = parts;
            this.fixedLength = fixedLength;
        }
    }

    /**
     * Adds an entry; when an entry with the same composite is already there, adds nothing and returns that one
     * (envoy: "duplicate descriptor composite key").
     */
    @Nullable
    DescriptorNode add(DescriptorNode node) {
        String composite = node.composite();
        DescriptorNode before = keyOnly(composite);
        if (before != null) {
            return before;
        }
        if ((size + 1) * 2 > composites.length) {
            grow();
        }
        put(composite, node);
        if (composite.indexOf('*') >= 0) {
            String[] parts = composite.split("\\*", -1);
            int fixed = 0;
            for (String p : parts) {
                fixed += p.length();
            }
            wildcards.add(new Wildcard(node, parts, fixed));
        }
        return null;
    }

    /**
     * The entry for one request entry, in envoy's order (exact, then wildcards in file order, then key-only), or null.
     * {@link DomainRules#match} uses the three steps separately, since how an entry matched decides its metric label.
     */
    public @Nullable DescriptorNode find(String key, String value) {
        DescriptorNode n = exact(key, value);
        if (n == null) {
            n = wildcard(key, value);
        }
        return n != null ? n : keyOnly(key);
    }

    /** The entry whose composite is {@code key + "_" + value}, or null. */
    public @Nullable DescriptorNode exact(String key, String value) {
        // String.hashCode of key + "_" + value, from the (cached) hashes of its parts
        int hash = (key.hashCode() * 31 + '_') * pow31(value.length()) + value.hashCode();
        int mask = composites.length - 1;
        for (int i = spread(hash) & mask; composites[i] != null; i = (i + 1) & mask) {
            String c = composites[i];
            if (c.hashCode() == hash && isComposite(c, key, value)) {
                return nodes[i];
            }
        }
        return null;
    }

    /** The first wildcard entry, in file order, whose pattern matches {@code key + "_" + value}, or null. */
    public @Nullable DescriptorNode wildcard(String key, String value) {
        for (int i = 0; i < wildcards.size(); i++) {
            Wildcard w = wildcards.get(i);
            if (matches(w.parts, w.fixedLength, key, value)) {
                return w.node;
            }
        }
        return null;
    }

    /** The entry whose composite is {@code key} (the key-only entry of that key), or null. */
    public @Nullable DescriptorNode keyOnly(String key) {
        int mask = composites.length - 1;
        for (int i = spread(key.hashCode()) & mask; composites[i] != null; i = (i + 1) & mask) {
            if (composites[i].equals(key)) {
                return nodes[i];
            }
        }
        return null;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    // ---- the table

    private void put(String composite, DescriptorNode node) {
        int mask = composites.length - 1;
        int i = spread(composite.hashCode()) & mask;
        while (composites[i] != null) {
            i = (i + 1) & mask;
        }
        composites[i] = composite;
        nodes[i] = node;
        size++;
    }

    private void grow() {
        String[] oldComposites = composites;
        DescriptorNode[] oldNodes = nodes;
        composites = new String[oldComposites.length * 2];
        nodes = new DescriptorNode[oldComposites.length * 2];
        size = 0;
        for (int i = 0; i < oldComposites.length; i++) {
            if (oldComposites[i] != null) {
                put(oldComposites[i], oldNodes[i]);
            }
        }
    }

    private static int spread(int hash) {
        return hash ^ (hash >>> 16);
    }

    /** 31 to the power {@code n}, wrapping as {@link String#hashCode()} does. */
    private static int pow31(int n) {
        int result = 1;
        for (int base = 31; n > 0; n >>= 1, base *= base) {
            if ((n & 1) != 0) {
                result *= base;
            }
        }
        return result;
    }

    /** Whether {@code composite} is {@code key + "_" + value}. */
    private static boolean isComposite(String composite, String key, String value) {
        int k = key.length();
        return composite.length() == k + 1 + value.length()
                && composite.startsWith(key)
                && composite.charAt(k) == '_'
                && composite.startsWith(value, k + 1);
    }

    // ---- envoy's wildcardMatch, on the request's key + "_" + value without building it

    /**
     * Whether {@code key_value} matches a pattern split on {@code *}: it starts with the first part, ends with the
     * last, and holds the middle parts in order between them, none overlapping (envoy's {@code wildcardMatch}).
     */
    private static boolean matches(String[] parts, int fixedLength, String key, String value) {
        int length = key.length() + 1 + value.length();
        if (length < fixedLength) {
            return false;
        }
        String first = parts[0];
        String last = parts[parts.length - 1];
        if (!regionMatches(key, value, 0, first) || !regionMatches(key, value, length - last.length(), last)) {
            return false;
        }
        int from = first.length();
        int end = length - last.length();
        for (int i = 1; i < parts.length - 1; i++) {
            int at = indexOf(key, value, parts[i], from, end);
            if (at < 0) {
                return false;
            }
            from = at + parts[i].length();
        }
        return true;
    }

    /** The character at {@code i} of {@code key + "_" + value}. */
    private static char charAt(String key, String value, int i) {
        int k = key.length();
        return i < k ? key.charAt(i) : i == k ? '_' : value.charAt(i - k - 1);
    }

    private static boolean regionMatches(String key, String value, int offset, String part) {
        for (int j = 0; j < part.length(); j++) {
            if (charAt(key, value, offset + j) != part.charAt(j)) {
                return false;
            }
        }
        return true;
    }

    /** The first index in [from, end - part.length()] where {@code part} occurs in {@code key_value}, or -1. */
    private static int indexOf(String key, String value, String part, int from, int end) {
        for (int at = from; at + part.length() <= end; at++) {
            if (regionMatches(key, value, at, part)) {
                return at;
            }
        }
        return -1;
    }
}
