package dev.sluice.server.config;

import java.io.Reader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Reads envoyproxy/ratelimit's YAML, as it is, plus Sluice's keys: {@code semantics} beside {@code domain}
 * ({@code envoy} or {@code strict}, see {@link Semantics}), and on {@code rate_limit} {@code algorithm} (default
 * {@code fixed_window}, envoy's behaviour), {@code burst} (token_bucket and gcra capacity; defaults to
 * {@code requests_per_unit}) and {@code window} (any duration, instead of {@code unit}).
 *
 * <p>Every key of envoy's loader is read: {@code domain}, {@code descriptors}, {@code key}, {@code value},
 * {@code rate_limit} ({@code unit}, {@code requests_per_unit}, {@code unlimited}, {@code name}, {@code replaces}),
 * and the descriptor flags {@code shadow_mode}, {@code quota_mode}, {@code detailed_metric},
 * {@code value_to_metric}, {@code share_threshold} and {@code metadata}; and Sluice's {@code charge_on_stream_done}
 * and {@code reservation} beside a {@code rate_limit} (costs known when the stream ends, {@link StreamDone}). envoy's own checks apply, with its wording
 * where it has one: an empty key or domain, a duplicate composite ({@code key_value}) in one list, a unit with
 * {@code unlimited}, an empty {@code replaces} name or one naming its own rule, {@code share_threshold} on an entry
 * without {@code *}.
 *
 * <p>The YAML is read as a node tree (not bound to classes) so that every problem can name its file and line.
 * Parsing does not stop at the first problem: all of them are collected and reported together. Unknown keys are
 * errors, as in envoy: a misspelt {@code shadow_mode} must not silently enforce a limit. Unlike envoy, a known key
 * in the wrong place (envoy checks key names, not where they stand, and then ignores it) is an error too, saying
 * where it belongs.
 *
 * <p>A hostile or broken file gets problems too, never another exception: files over 8 Mi characters, nesting over
 * 50 levels and more than 20 aliases of lists or mappings (the YAML "billion laughs") are refused with the line where
 * reading stopped; a descriptor list that contains itself through an alias is a problem, not a stack overflow; and
 * values quoted in messages are cut ({@link Messages}), so a huge value aliased many times cannot blow up the report.
 */
public final class RulesParser {

    private static final Set<String> DOMAIN_KEYS = Set.of("domain", "descriptors", "semantics");
    private static final Set<String> DESCRIPTOR_KEYS = Set.of(
            "key",
            "value",
            "rate_limit",
            "descriptors",
            "shadow_mode",
            "quota_mode",
            "detailed_metric",
            "value_to_metric",
            "share_threshold",
            "metadata",
            StreamDoneNodes.CHARGE,
            StreamDoneNodes.RESERVATION);
    /** Where each key belongs, for the problem of a known key in the wrong place. */
    private static final Map<String, String> PLACES = places();

    private final String source;
    private final List<String> problems = new ArrayList<>();
    /** The descriptor lists being walked, outermost first: an alias may point back into them (a cycle). */
    private final Set<Node> walking = Collections.newSetFromMap(new IdentityHashMap<>());

    private final RuleNodes nodes;
    private final RateLimitNodes rateLimits;
    private final StreamDoneNodes streamDone;

    private RulesParser(String source) {
        this.source = source;
        this.nodes = new RuleNodes(source, problems, PLACES);
        this.rateLimits = new RateLimitNodes(nodes, problems);
        this.streamDone = new StreamDoneNodes(nodes);
    }

    /**
     * Parses one file (one YAML document per domain; {@code ---} separates several).
     *
     * @param source the file name used in messages
     * @throws ConfigException listing every problem found
     */
    public static List<DomainRules> parse(String source, Reader reader) throws ConfigException {
        RulesParser p = new RulesParser(source);
        List<DomainRules> out = p.parseAll(reader);
        if (!p.problems.isEmpty()) {
            p.problems.replaceAll(RuleNodes::capped);
            p.problems.sort(Comparator.comparingInt(RuleNodes::lineOf)); // stable: file order within a line
            throw new ConfigException(p.problems);
        }
        return out;
    }

    private List<DomainRules> parseAll(Reader reader) {
        List<DomainRules> out = new ArrayList<>();
        for (Node doc : BoundedYaml.documents(source, reader, problems)) {
            DomainRules d = domain(doc);
            if (d != null) {
                out.add(d);
            }
        }
        if (out.isEmpty() && problems.isEmpty()) {
            problems.add(source + ":1: no rules: a file needs 'domain:' and 'descriptors:'");
        }
        return out;
    }

    private @Nullable DomainRules domain(Node doc) {
        Map<String, Node> fields = nodes.mapping(doc, "a rules document", DOMAIN_KEYS);
        if (fields == null) {
            return null;
        }
        String domain = nodes.string(fields.get("domain"), "domain");
        if (fields.get("domain") == null) {
            nodes.problem(doc, "missing 'domain': every rules document names its domain, e.g. 'domain: api'");
            return null;
        }
        if (domain == null || domain.isEmpty()) {
            nodes.problem(fields.get("domain"), "'domain' must be a non-empty string");
            return null;
        }
        Semantics semantics = null;
        if (fields.containsKey("semantics")) {
            String s = nodes.string(fields.get("semantics"), "semantics");
            if (s != null) {
                try {
                    semantics = Semantics.fromConfigName(s);
                } catch (IllegalArgumentException e) {
                    nodes.problem(fields.get("semantics"), e.getMessage());
                }
            }
        }
        List<Rule> rules = new ArrayList<>();
        DescriptorLevel root = level(fields.get("descriptors"), domain, rules, Set.of());
        return new DomainRules(domain, semantics, root, List.copyOf(rules), nodes.where(doc));
    }

    private DescriptorLevel level(@Nullable Node node, String path, List<Rule> rules, Set<String> unused) {
        DescriptorLevel level = new DescriptorLevel();
        if (node == null || RuleNodes.isNull(node)) { // 'descriptors:' with nothing: none, as envoy reads it
            return level;
        }
        if (!(node instanceof SequenceNode seq)) {
            nodes.problem(node, "'descriptors' must be a list of '- key: …' entries");
            return level;
        }
        if (!walking.add(seq)) {
            // an alias to an enclosing list (YAML allows it): walking on would never end
            nodes.problem(
                    node,
                    "'descriptors' contains itself through an alias (*name): descriptors form a tree; "
                            + "write the nested levels out");
            return level;
        }
        try {
            for (Node item : seq.getValue()) {
                DescriptorNode d = descriptor(item, path, rules);
                if (d == null) {
                    continue;
                }
                DescriptorNode before = level.add(d);
                if (before == null) {
                    continue;
                }
                if (before.key().equals(d.key()) && Objects.equals(before.value(), d.value())) {
                    nodes.problem(
                            item,
                            "duplicate descriptor key " + Messages.quote(d.key())
                                    + (d.value() == null ? "" : " value " + Messages.quote(d.value()))
                                    + " in the same list: each key/value pair may appear once per level");
                } else {
                    nodes.problem(
                            item,
                            "duplicate descriptor composite key " + Messages.quote(d.composite()) + ": "
                                    + describe(d) + " and " + describe(before)
                                    + " in the same list are one entry to envoy, "
                                    + "which knows entries by key + '_' + value; rename one of the keys");
                }
            }
        } finally {
            walking.remove(seq);
        }
        return level;
    }

    private @Nullable DescriptorNode descriptor(Node node, String parentPath, List<Rule> rules) {
        Map<String, Node> f = nodes.mapping(node, "a descriptor", DESCRIPTOR_KEYS);
        if (f == null) {
            return null;
        }
        String key = nodes.string(f.get("key"), "key");
        if (key == null || key.isEmpty()) {
            nodes.problem(node, "descriptor without a 'key': every entry needs one, e.g. 'key: remote_address'");
            return null;
        }
        String value = f.containsKey("value") ? nodes.string(f.get("value"), "value") : null;
        if (value != null && value.isEmpty()) {
            value = null;
        }
        String composite = value == null ? key : key + "_" + value;
        String path = parentPath + "." + composite;
        boolean shadow = nodes.bool(f.get("shadow_mode"), "shadow_mode");
        boolean quota = nodes.bool(f.get("quota_mode"), "quota_mode");
        boolean detailed = nodes.bool(f.get("detailed_metric"), "detailed_metric");
        boolean valueToMetric = nodes.bool(f.get("value_to_metric"), "value_to_metric");
        boolean share = nodes.bool(f.get("share_threshold"), "share_threshold");
        if (share && composite.indexOf('*') < 0) {
            nodes.problem(
                    f.get("share_threshold"),
                    "share_threshold can only be used with wildcard values (containing "
                            + "'*'), but found key " + Messages.quote(composite)
                            + ": write a pattern, e.g. 'value: files/*' (every "
                            + "value matching it then shares one counter), or remove 'share_threshold'");
            share = false;
        }
        Map<String, Object> metadata = Metadata.read(f.get("metadata"), nodes::problem);
        Rule rule = null;
        if (f.get("rate_limit") != null) {
            rule = rateLimits.read(f.get("rate_limit"), path, shadow, quota, detailed, metadata);
            StreamDone sd = streamDone.read(f, rule, true);
            if (rule != null) {
                rule = sd == null ? rule : rule.withStreamDone(sd);
                rules.add(rule);
            }
        } else {
            streamDone.read(f, null, false);
            if (shadow) {
                nodes.problem(
                        f.get("shadow_mode"),
                        "'shadow_mode' on a descriptor without 'rate_limit' has no effect: "
                                + "put it beside the rate_limit it should soften");
            }
            if (quota) {
                nodes.problem(
                        f.get("quota_mode"),
                        "'quota_mode' on a descriptor without 'rate_limit' has no effect: "
                                + "put it beside the rate_limit it should soften");
            }
            if (metadata != null) {
                nodes.problem(
                        f.get("metadata"),
                        "'metadata' on a descriptor without 'rate_limit' has no effect (it is "
                                + "returned with the rule that matched): put it beside the rate_limit it describes");
            }
        }
        DescriptorLevel children = level(f.get("descriptors"), path, rules, Set.of());
        return new DescriptorNode(
                key, value, rule, children.isEmpty() ? DescriptorLevel.EMPTY : children, valueToMetric, share);
    }

    private static String describe(DescriptorNode d) {
        return "key " + Messages.quote(d.key()) + (d.value() == null ? "" : " value " + Messages.quote(d.value()));
    }

    private static Map<String, String> places() {
        // envoy checks key names, not where they stand: there it would accept these and ignore them
        String envoyIgnores = " (envoyproxy/ratelimit would ignore it here)";
        Map<String, String> m = new HashMap<>();
        m.put("domain", "at the top of a rules document" + envoyIgnores);
        m.put("descriptors", "at the top of a rules document or on a descriptor" + envoyIgnores);
        for (String k : DESCRIPTOR_KEYS) {
            m.putIfAbsent(k, "on a descriptor (a '- key: …' entry)" + envoyIgnores);
        }
        for (String k : List.of("unit", "requests_per_unit", "unlimited", "replaces")) {
            m.put(k, "in 'rate_limit'" + envoyIgnores);
        }
        m.put("name", "in 'rate_limit' or in a 'replaces' entry" + envoyIgnores);
        m.put("semantics", "at the top of a rules document, beside 'domain'");
        for (String k : List.of("algorithm", "burst", "window")) {
            m.put(k, "in 'rate_limit'");
        }
        for (String k : StreamDoneNodes.RESERVATION_KEYS) {
            m.put(k, "in 'reservation'");
        }
        return Map.copyOf(m);
    }
}
