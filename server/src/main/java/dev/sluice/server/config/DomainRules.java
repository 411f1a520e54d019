package dev.sluice.server.config;

import java.util.List;

/**
 * The rules of one {@code domain:}. {@link #match(List)} follows envoyproxy/ratelimit: walk the request's
 * entries down the nested lists, taking the most specific entry at each level; a rule applies only when it sits
 * exactly at the depth of the request's last entry (a two-entry request never matches a one-level rule).
 */
public record DomainRules(String domain, DescriptorLevel root, List<Rule> rules, String source) {

    /** One request entry: a key and its value. */
    public record Entry(String key, String value) {
    }

    /** The rule for a request descriptor, or null when none applies. */
    public Rule match(List<Entry> entries) {
        DescriptorLevel level = root;
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            DescriptorNode next = level.find(e.key(), e.value());
            if (next == null) {
                return null;
            }
            if (i == entries.size() - 1) {
                return next.rule();
            }
            if (next.children().isEmpty()) {
                return null;
            }
            level = next.children();
        }
        return null;
    }
}
