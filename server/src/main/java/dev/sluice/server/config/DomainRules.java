package dev.sluice.server.config;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The rules of one {@code domain:}. {@link #match(List)} follows envoyproxy/ratelimit's {@code GetLimit}: walk the
 * request's entries down the nested lists, taking at each level the entry {@link DescriptorLevel} finds (exact
 * {@code key_value}, else the first matching wildcard in file order, else the key-only entry); a rule applies only
 * when it sits exactly at the depth of the request's last entry (a two-entry request never matches a one-level rule).
 *
 * @param semantics the file's {@code semantics:} (Sluice's key, beside {@code domain:}), or null for the service's
 *                  default ({@code sluice serve --semantics})
 * @param source    {@code file:line} of the document, for messages
 * @param reservationIdKeys the {@code id_key}s of the domain's {@code reservation:} rules ({@link StreamDone}): a
 *                  request descriptor whose last entry has one of these keys carries a reservation id there
 */
public record DomainRules(
        String domain,
        @Nullable Semantics semantics,
        DescriptorLevel root,
        List<Rule> rules,
        String source,
        Set<String> reservationIdKeys) {

    public DomainRules(
            String domain, @Nullable Semantics semantics, DescriptorLevel root, List<Rule> rules, String source) {
        this(domain, semantics, root, rules, source, idKeys(rules));
    }

    private static Set<String> idKeys(List<Rule> rules) {
        Set<String> keys = new HashSet<>();
        for (Rule r : rules) {
            StreamDone sd = r.streamDone();
            if (sd != null && sd.idKey() != null) {
                keys.add(sd.idKey());
            }
        }
        return Set.copyOf(keys);
    }

    /** One request entry: a key and its value (possibly empty, never null). */
    public record Entry(String key, String value) {}

    /** How a level's entry was found: by its exact composite, by a wildcard pattern, or as the key's entry. */
    private static final int EXACT = 0;

    private static final int WILDCARD = 1;
    private static final int KEY_ONLY = 2;

    /**
     * The rule for a request descriptor, with its store key entries and metric label, or null when no rule applies.
     *
     * <p>As envoy: an entry matched through a wildcard entry with {@code share_threshold} (at any level on the way
     * down) has its value replaced, in {@link Match#keyEntries()}, by the pattern's value part, so every value
     * matching the pattern shares one counter. {@link Match#metricLabel()} is envoy's stats key for the rule:
     * <ul>
     *   <li>{@code detailed_metric} on the rule's descriptor: the domain and every entry as sent,
     *       {@code domain.key_value.key_value} ({@code key_} for an empty value), except that with a
     *       {@code share_threshold} entry among them each entry is {@code key_pattern} for shared ones and
     *       {@code key_value} ({@code key} for an empty value) for the others;</li>
     *   <li>otherwise level by level: {@code key_value} for an exact match; for a wildcard match the pattern
     *       ({@code key_files/*}), or the value sent when the entry has {@code value_to_metric} and no
     *       {@code share_threshold}; for a key-only match {@code key}, or {@code key_value} with
     *       {@code value_to_metric} (and a non-empty value). Without any of these flags this is the rule's
     *       {@link Rule#id()}.</li>
     * </ul>
     * A request that needs none of this (no flag at play: the common case) costs no more than the lookup and the
     * returned {@link Match}.
     */
    public @Nullable Match match(List<Entry> entries) {
        return walk(entries, false);
    }

    /**
     * Walks the levels. Unlabelled, it only finds the rule and notes whether any level could make the store key or
     * the label differ from the defaults; if so it walks again, labelled, to build them.
     */
    private @Nullable Match walk(List<Entry> entries, boolean labelled) {
        int n = entries.size();
        DescriptorLevel level = root;
        boolean plain = true;
        StringBuilder label = labelled ? new StringBuilder(domain) : null;
        String[] shared = null;
        Rule rule = null;
        for (int i = 0; i < n; i++) {
            Entry e = entries.get(i);
            String k = e.key();
            String v = e.value();
            int how = EXACT;
            DescriptorNode node = level.exact(k, v);
            if (node == null && (node = level.wildcard(k, v)) != null) {
                how = WILDCARD;
            }
            if (node == null && (node = level.keyOnly(k)) != null) {
                how = KEY_ONLY;
            }
            if (node == null) {
                return null;
            }
            if (!labelled) {
                plain &= switch (how) {
                    case EXACT -> !v.isEmpty();
                    case WILDCARD -> !node.shareThreshold() && !node.valueToMetric() && patternStartsWithKey(node, k);
                    default -> !node.valueToMetric() || v.isEmpty();
                };
            } else {
                String shown; // this entry's value in the label ("" for none)
                if (how == WILDCARD) {
                    String pattern = trimKey(node.composite(), k);
                    if (node.shareThreshold()) {
                        if (shared == null) {
                            shared = new String[n];
                        }
                        shared[i] = pattern;
                        shown = pattern;
                    } else {
                        shown = node.valueToMetric() ? v : pattern;
                    }
                } else if (how == EXACT) {
                    shown = v;
                } else {
                    shown = node.valueToMetric() ? v : "";
                }
                StringBuilder l = Objects.requireNonNull(label, "labelled");
                l.append('.').append(k);
                if (!shown.isEmpty()) {
                    l.append('_').append(shown);
                }
            }
            if (i == n - 1) {
                rule = node.rule();
            } else if (node.children().isEmpty()) {
                return null;
            } else {
                level = node.children();
            }
        }
        if (rule == null) {
            return null;
        }
        if (!labelled) {
            return plain && !rule.detailedMetric() ? new Match(rule, entries, rule.id()) : walk(entries, true);
        }
        List<Entry> keyEntries = entries;
        if (shared != null) {
            Entry[] keys = entries.toArray(new Entry[0]);
            for (int i = 0; i < n; i++) {
                if (shared[i] != null) {
                    keys[i] = new Entry(keys[i].key(), shared[i]);
                }
            }
            keyEntries = List.of(keys);
        }
        String metricLabel = rule.detailedMetric()
                ? detailedLabel(entries, shared)
                : Objects.requireNonNull(label, "labelled").toString();
        return new Match(rule, keyEntries, metricLabel.equals(rule.id()) ? rule.id() : metricLabel);
    }

    /** envoy's {@code detailed_metric} stats key: every entry as sent, shared ones by their pattern. */
    private String detailedLabel(List<Entry> entries, String @Nullable [] shared) {
        StringBuilder sb = new StringBuilder(domain);
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            sb.append('.').append(e.key());
            if (shared == null) {
                sb.append('_').append(e.value()); // envoy writes key + "_" + value here, even for an empty value
            } else {
                String shown = shared[i] != null ? shared[i] : e.value();
                if (!shown.isEmpty()) {
                    sb.append('_').append(shown);
                }
            }
        }
        return sb.toString();
    }

    /** envoy's {@code strings.TrimPrefix(composite, key + "_")}: a wildcard entry's pattern for the value. */
    private static String trimKey(String composite, String key) {
        return composite.length() > key.length() && composite.startsWith(key) && composite.charAt(key.length()) == '_'
                ? composite.substring(key.length() + 1)
                : composite;
    }

    /** Whether the entry's composite starts with {@code key + "_"}, i.e. {@link #trimKey} gives its own pattern. */
    private static boolean patternStartsWithKey(DescriptorNode node, String key) {
        if (node.value() != null && node.key().equals(key)) {
            return true; // the usual case, without building the composite
        }
        String composite = node.composite();
        return !trimKey(composite, key).equals(composite);
    }
}
