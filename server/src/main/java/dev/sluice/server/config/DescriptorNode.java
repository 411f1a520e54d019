package dev.sluice.server.config;

/**
 * One entry of a (possibly nested) {@code descriptors} list: a key, an optional value (null matches any value;
 * a value ending in {@code *} matches by prefix), an optional rule, and the nested list below it.
 */
public record DescriptorNode(String key, String value, Rule rule, DescriptorLevel children) {

    boolean isPrefix() {
        return value != null && value.endsWith("*");
    }
}
