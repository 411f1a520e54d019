package dev.sluice.server.config;

import org.jspecify.annotations.Nullable;

/**
 * One entry of a (possibly nested) {@code descriptors} list: a key, an optional value, an optional rule, the nested
 * list below it, and envoy's descriptor flags that act on matching and metrics.
 *
 * <p>As in envoyproxy/ratelimit, an entry is known by its <em>composite</em>: {@code key_value}, or just {@code key}
 * without a value ({@link #composite()}). A composite containing {@code *} makes the entry a wildcard entry, wherever
 * the {@code *} is (trailing, middle, several, even in the key): each {@code *} matches any run of characters, zero
 * included, of a request entry's {@code key_value}. See {@link DescriptorLevel} for the matching order.
 *
 * @param key            {@code key}, never empty
 * @param value          {@code value}, or null when absent or empty (the entry then matches any value of its key)
 * @param rule           the {@code rate_limit} of this entry, or null
 * @param children       the nested {@code descriptors}, {@link DescriptorLevel#isEmpty() empty} when none
 * @param valueToMetric  {@code value_to_metric}: the metric label carries the value the request sent for this entry
 *                       when it was matched by a wildcard or by a key-only entry (see {@link DomainRules#match})
 * @param shareThreshold {@code share_threshold} (wildcard entries only): every value matching this entry's pattern
 *                       shares one counter, the pattern standing in for the value in the store key and the label
 */
public record DescriptorNode(
        String key,
        @Nullable String value,
        @Nullable Rule rule,
        DescriptorLevel children,
        boolean valueToMetric,
        boolean shareThreshold) {

    /** envoy's name for the entry in its level: {@code key_value}, or {@code key} when there is no value. */
    public String composite() {
        return value == null ? key : key + "_" + value;
    }

    /** Whether the composite holds a {@code *}: the entry then matches by pattern. */
    public boolean isWildcard() {
        return key.indexOf('*') >= 0 || (value != null && value.indexOf('*') >= 0);
    }
}
