package dev.sluice.server.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code descriptors:} list, indexed for envoy's matching order: an exact {@code key}+{@code value} entry
 * first, then the first prefix ({@code value: foo*}) entry in file order, then the {@code key}-only entry.
 */
public final class DescriptorLevel {
    static final DescriptorLevel EMPTY = new DescriptorLevel();

    private final Map<String, DescriptorNode> exact = new HashMap<>();
    private final Map<String, DescriptorNode> anyValue = new HashMap<>();
    private final List<DescriptorNode> prefixes = new ArrayList<>();

    /** Adds a node; returns false when an entry with the same key and value is already there. */
    boolean add(DescriptorNode node) {
        if (node.value() == null) {
            return anyValue.putIfAbsent(node.key(), node) == null;
        }
        if (exact.putIfAbsent(compositeKey(node.key(), node.value()), node) != null) {
            return false;
        }
        if (node.isPrefix()) {
            prefixes.add(node);
        }
        return true;
    }

    /** The most specific entry for one request entry, or null. */
    public DescriptorNode find(String key, String value) {
        DescriptorNode n = exact.get(compositeKey(key, value));
        if (n != null) {
            return n;
        }
        for (DescriptorNode p : prefixes) {
            String v = p.value();
            if (p.key().equals(key) && value.startsWith(v.substring(0, v.length() - 1))) {
                return p;
            }
        }
        return anyValue.get(key);
    }

    public boolean isEmpty() {
        return exact.isEmpty() && anyValue.isEmpty();
    }

    private static String compositeKey(String key, String value) {
        return key + '\u0000' + value;
    }
}
