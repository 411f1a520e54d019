package dev.sluice.server.config;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.RateUnit;
import java.io.Reader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads envoyproxy/ratelimit's YAML, as it is, plus Sluice's keys: {@code semantics} beside {@code domain}
 * ({@code envoy} or {@code strict}, see {@link Semantics}), and on {@code rate_limit} {@code algorithm} (default
 * {@code fixed_window}, envoy's behaviour), {@code burst} (token_bucket and gcra capacity; defaults to
 * {@code requests_per_unit}) and {@code window} (any duration, instead of {@code unit}).
 *
 * <p>Every key of envoy's loader is read: {@code domain}, {@code descriptors}, {@code key}, {@code value},
 * {@code rate_limit} ({@code unit}, {@code requests_per_unit}, {@code unlimited}, {@code name}, {@code replaces}),
 * and the descriptor flags {@code shadow_mode}, {@code quota_mode}, {@code detailed_metric},
 * {@code value_to_metric}, {@code share_threshold} and {@code metadata}. envoy's own checks apply, with its wording
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
            "metadata");
    private static final Set<String> RATE_LIMIT_KEYS =
            Set.of("unit", "requests_per_unit", "name", "replaces", "unlimited", "algorithm", "burst", "window");
    /** Where each key belongs, for the problem of a known key in the wrong place. */
    private static final Map<String, String> PLACES = places();

    private final String source;
    private final List<String> problems = new ArrayList<>();
    /** The descriptor lists being walked, outermost first: an alias may point back into them (a cycle). */
    private final Set<Node> walking = Collections.newSetFromMap(new IdentityHashMap<>());

    private RulesParser(String source) {
        this.source = source;
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
            p.problems.replaceAll(RulesParser::capped);
            p.problems.sort(Comparator.comparingInt(RulesParser::lineOf)); // stable: file order within a line
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
        Map<String, Node> fields = mapping(doc, "a rules document", DOMAIN_KEYS);
        if (fields == null) {
            return null;
        }
        String domain = string(fields.get("domain"), "domain");
        if (fields.get("domain") == null) {
            problem(doc, "missing 'domain': every rules document names its domain, e.g. 'domain: api'");
            return null;
        }
        if (domain == null || domain.isEmpty()) {
            problem(fields.get("domain"), "'domain' must be a non-empty string");
            return null;
        }
        Semantics semantics = null;
        if (fields.containsKey("semantics")) {
            String s = string(fields.get("semantics"), "semantics");
            if (s != null) {
                try {
                    semantics = Semantics.fromConfigName(s);
                } catch (IllegalArgumentException e) {
                    problem(fields.get("semantics"), e.getMessage());
                }
            }
        }
        List<Rule> rules = new ArrayList<>();
        DescriptorLevel root = level(fields.get("descriptors"), domain, rules, Set.of());
        return new DomainRules(domain, semantics, root, List.copyOf(rules), where(doc));
    }

    private DescriptorLevel level(@Nullable Node node, String path, List<Rule> rules, Set<String> unused) {
        DescriptorLevel level = new DescriptorLevel();
        if (node == null || isNull(node)) { // 'descriptors:' with nothing: none, as envoy reads it
            return level;
        }
        if (!(node instanceof SequenceNode seq)) {
            problem(node, "'descriptors' must be a list of '- key: …' entries");
            return level;
        }
        if (!walking.add(seq)) {
            // an alias to an enclosing list (YAML allows it): walking on would never end
            problem(
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
                    problem(
                            item,
                            "duplicate descriptor key " + quote(d.key())
                                    + (d.value() == null ? "" : " value " + quote(d.value()))
                                    + " in the same list: each key/value pair may appear once per level");
                } else {
                    problem(
                            item,
                            "duplicate descriptor composite key " + quote(d.composite()) + ": "
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
        Map<String, Node> f = mapping(node, "a descriptor", DESCRIPTOR_KEYS);
        if (f == null) {
            return null;
        }
        String key = string(f.get("key"), "key");
        if (key == null || key.isEmpty()) {
            problem(node, "descriptor without a 'key': every entry needs one, e.g. 'key: remote_address'");
            return null;
        }
        String value = f.containsKey("value") ? string(f.get("value"), "value") : null;
        if (value != null && value.isEmpty()) {
            value = null;
        }
        String composite = value == null ? key : key + "_" + value;
        String path = parentPath + "." + composite;
        boolean shadow = bool(f.get("shadow_mode"), "shadow_mode");
        boolean quota = bool(f.get("quota_mode"), "quota_mode");
        boolean detailed = bool(f.get("detailed_metric"), "detailed_metric");
        boolean valueToMetric = bool(f.get("value_to_metric"), "value_to_metric");
        boolean share = bool(f.get("share_threshold"), "share_threshold");
        if (share && composite.indexOf('*') < 0) {
            problem(
                    f.get("share_threshold"),
                    "share_threshold can only be used with wildcard values (containing "
                            + "'*'), but found key " + quote(composite)
                            + ": write a pattern, e.g. 'value: files/*' (every "
                            + "value matching it then shares one counter), or remove 'share_threshold'");
            share = false;
        }
        Map<String, Object> metadata = Metadata.read(f.get("metadata"), this::problem);
        Rule rule = null;
        if (f.get("rate_limit") != null) {
            rule = rateLimit(f.get("rate_limit"), path, shadow, quota, detailed, metadata);
            if (rule != null) {
                rules.add(rule);
            }
        } else {
            if (shadow) {
                problem(
                        f.get("shadow_mode"),
                        "'shadow_mode' on a descriptor without 'rate_limit' has no effect: "
                                + "put it beside the rate_limit it should soften");
            }
            if (quota) {
                problem(
                        f.get("quota_mode"),
                        "'quota_mode' on a descriptor without 'rate_limit' has no effect: "
                                + "put it beside the rate_limit it should soften");
            }
            if (metadata != null) {
                problem(
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
        return "key " + quote(d.key()) + (d.value() == null ? "" : " value " + quote(d.value()));
    }

    private @Nullable Rule rateLimit(
            Node node,
            String path,
            boolean shadow,
            boolean quota,
            boolean detailed,
            @Nullable Map<String, Object> metadata) {
        Map<String, Node> f = mapping(node, "'rate_limit'", RATE_LIMIT_KEYS);
        if (f == null) {
            return null;
        }
        int before = problems.size();
        String name = f.containsKey("name") ? string(f.get("name"), "name") : null;
        if (name != null && name.isEmpty()) {
            name = null; // 'name:' with nothing is no name, as in envoy
        }
        List<String> replaces = replaces(f.get("replaces"), name);
        boolean unlimited = bool(f.get("unlimited"), "unlimited");
        String where = where(node);
        if (unlimited) {
            for (String k : List.of("unit", "requests_per_unit", "algorithm", "burst", "window")) {
                if (f.containsKey(k)) {
                    problem(f.get(k), "'" + k + "' with 'unlimited: true': an unlimited rule has no limit; remove one");
                }
            }
            return problems.size() > before
                    ? null
                    : new Rule(
                            path,
                            name,
                            replaces,
                            Rule.Kind.UNLIMITED,
                            null,
                            null,
                            0,
                            null,
                            null,
                            0,
                            shadow,
                            quota,
                            detailed,
                            metadata,
                            where);
        }
        Algorithm algorithm = Algorithm.FIXED_WINDOW;
        if (f.containsKey("algorithm")) {
            try {
                algorithm = Algorithm.fromConfigName(string(f.get("algorithm"), "algorithm"));
            } catch (IllegalArgumentException e) {
                problem(f.get("algorithm"), e.getMessage());
            }
        }
        Long rpu = null;
        if (!f.containsKey("requests_per_unit")) {
            problem(
                    node,
                    "'rate_limit' without 'requests_per_unit': say how many requests, e.g. 'requests_per_unit: 100'"
                            + " (or 'unlimited: true')");
        } else {
            rpu = integer(f.get("requests_per_unit"), "requests_per_unit");
            if (rpu != null && rpu < 0) {
                problem(
                        f.get("requests_per_unit"),
                        "'requests_per_unit' " + rpu + " is negative: use 0 (block) or more");
                rpu = null;
            }
        }
        String unit = null;
        Duration window = null;
        if (f.containsKey("unit") && f.containsKey("window")) {
            problem(
                    f.get("window"),
                    "both 'unit' and 'window': give one ('window: 90s' is any length, 'unit' is envoy's)");
        } else if (f.containsKey("unit")) {
            unit = string(f.get("unit"), "unit");
            if (unit != null) {
                unit = unit.toLowerCase(Locale.ROOT);
                try {
                    window = RateUnit.fromConfigName(unit).length();
                } catch (IllegalArgumentException e) {
                    problem(
                            f.get("unit"),
                            "unknown unit " + quote(unit) + ": use one of " + RateUnit.names()
                                    + ", or 'window: 90s' for any length");
                }
            }
        } else if (f.containsKey("window")) {
            try {
                window = Durations.parse(string(f.get("window"), "window"));
            } catch (IllegalArgumentException e) {
                problem(f.get("window"), e.getMessage());
            }
        } else {
            problem(node, "'rate_limit' without 'unit' or 'window': e.g. 'unit: second' or 'window: 90s'");
        }
        Long burst = null;
        if (f.containsKey("burst")) {
            burst = integer(f.get("burst"), "burst");
            if (!algorithm.isTat()) {
                problem(
                        f.get("burst"),
                        "'burst' applies to token_bucket and gcra, not " + algorithm.configName()
                                + ": remove it or set 'algorithm: token_bucket'");
                burst = null;
            }
        }
        if (problems.size() > before || rpu == null || window == null) {
            return null;
        }
        if (rpu == 0) {
            return new Rule(
                    path,
                    name,
                    replaces,
                    Rule.Kind.BLOCKED,
                    null,
                    algorithm,
                    0,
                    unit,
                    window,
                    0,
                    shadow,
                    quota,
                    detailed,
                    metadata,
                    where);
        }
        try {
            Limit limit = new LimitSpec(algorithm, rpu, window, burst).toLimit();
            limit = limit.named(name != null ? name : path);
            return new Rule(
                    path,
                    name,
                    replaces,
                    Rule.Kind.LIMITED,
                    limit,
                    algorithm,
                    rpu,
                    unit,
                    window,
                    limit.capacity(),
                    shadow,
                    quota,
                    detailed,
                    metadata,
                    where);
        } catch (IllegalArgumentException e) {
            problem(node, e.getMessage());
            return null;
        }
    }

    /** The names in {@code replaces}; {@code ownName} is the rule's own {@code name} (may be null). */
    private List<String> replaces(@Nullable Node node, @Nullable String ownName) {
        if (node == null || isNull(node)) {
            return List.of();
        }
        if (!(node instanceof SequenceNode seq)) {
            problem(node, "'replaces' must be a list of '- name: …' entries");
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (Node item : seq.getValue()) {
            Map<String, Node> f = mapping(item, "a 'replaces' entry", Set.of("name"));
            if (f == null) {
                continue;
            }
            String n = string(f.get("name"), "name");
            if (n == null || n.isEmpty()) {
                problem(item, "'replaces' entry without a 'name': name the rate_limit it replaces");
            } else if (n.equals(ownName)) {
                problem(
                        item,
                        "replaces should not contain name of same descriptor: " + quote(n) + " is this "
                                + "rate_limit's own name; name the rate_limit of another descriptor");
            } else {
                out.add(n);
            }
        }
        return List.copyOf(out);
    }

    // ---- node helpers: each reports a precise problem and returns null on a wrong shape

    private @Nullable Map<String, Node> mapping(Node node, String what, Set<String> allowed) {
        if (!(node instanceof MappingNode m)) {
            problem(node, what + " must be a mapping of 'key: value' lines");
            return null;
        }
        Map<String, Node> out = new LinkedHashMap<>();
        Set<String> seen = new HashSet<>();
        for (NodeTuple t : m.getValue()) {
            if (!(t.getKeyNode() instanceof ScalarNode k)) {
                problem(t.getKeyNode(), "keys must be plain words");
                continue;
            }
            String key = k.getValue();
            if (!seen.add(key)) {
                problem(k, "duplicate key " + quote(key));
                continue;
            }
            if (!allowed.contains(key)) {
                String place = PLACES.get(key);
                // the hint before the long list: Messages.abbreviateQuoted takes a long run between quotes for a value
                problem(
                        k,
                        "unknown key " + quote(key) + " in " + what + ": "
                                + (place == null ? "" : "it belongs " + place + "; ") + "expected one of "
                                + String.join(", ", allowed.stream().sorted().toList()));
                continue;
            }
            out.put(key, t.getValueNode());
        }
        return out;
    }

    private @Nullable String string(@Nullable Node node, String what) {
        if (node == null) {
            return null;
        }
        if (!(node instanceof ScalarNode s)) {
            problem(node, "'" + what + "' must be a single value, not a list or mapping");
            return null;
        }
        return s.getValue();
    }

    /** A flag; absent or empty ({@code shadow_mode:}) is false, as envoy reads it. */
    private boolean bool(@Nullable Node node, String what) {
        String s = isNull(node) ? null : string(node, what);
        if (s == null) {
            return false;
        }
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> {
                problem(node, "'" + what + "' must be true or false, not " + quote(s));
                yield false;
            }
        };
    }

    /** A YAML null: {@code key:} with nothing, {@code ~} or {@code null}. */
    private static boolean isNull(@Nullable Node node) {
        return node instanceof ScalarNode s && Tag.NULL.equals(s.getTag());
    }

    private @Nullable Long integer(@Nullable Node node, String what) {
        String s = string(node, what);
        if (s == null) {
            return null;
        }
        Long n = WholeNumbers.parse(s);
        if (n == null) {
            problem(node, WholeNumbers.problem(what, s));
        }
        return n;
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
        return Map.copyOf(m);
    }

    private static int lineOf(String problem) {
        Matcher m = Pattern.compile(":(\\d+): ").matcher(problem);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    private void problem(@Nullable Node node, @Nullable String message) {
        problems.add(where(node) + ": " + Messages.abbreviateQuoted(String.valueOf(message)));
    }

    /** A last bound for messages that quote without quotes (SnakeYAML's: "found undefined alias <name>"). */
    private static String capped(String problem) {
        return problem.length() <= 600 ? problem : problem.substring(0, 600) + "… (cut)";
    }

    private static String quote(String value) {
        return Messages.quote(value);
    }

    private String where(@Nullable Node node) {
        return node == null ? source : source + ":" + (node.getStartMark().getLine() + 1);
    }
}
