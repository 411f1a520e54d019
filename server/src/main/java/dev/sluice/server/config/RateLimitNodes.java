package dev.sluice.server.config;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.RateUnit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * {@link RulesParser}'s reading of one {@code rate_limit:} mapping into a {@link Rule}: envoy's {@code unit} and
 * {@code requests_per_unit}, {@code unlimited}, {@code name} and {@code replaces}, and Sluice's {@code algorithm},
 * {@code burst} and {@code window}, each problem reported with its line ({@link RuleNodes}).
 */
final class RateLimitNodes {
    private static final Set<String> RATE_LIMIT_KEYS =
            Set.of("unit", "requests_per_unit", "name", "replaces", "unlimited", "algorithm", "burst", "window");

    private final RuleNodes nodes;
    private final List<String> problems;

    RateLimitNodes(RuleNodes nodes, List<String> problems) {
        this.nodes = nodes;
        this.problems = problems;
    }

    @Nullable
    Rule read(
            Node node,
            String path,
            boolean shadow,
            boolean quota,
            boolean detailed,
            @Nullable Map<String, Object> metadata) {
        Map<String, Node> f = nodes.mapping(node, "'rate_limit'", RATE_LIMIT_KEYS);
        if (f == null) {
            return null;
        }
        int before = problems.size();
        String name = f.containsKey("name") ? nodes.string(f.get("name"), "name") : null;
        if (name != null && name.isEmpty()) {
            name = null; // 'name:' with nothing is no name, as in envoy
        }
        List<String> replaces = replaces(f.get("replaces"), name);
        boolean unlimited = nodes.bool(f.get("unlimited"), "unlimited");
        String where = nodes.where(node);
        if (unlimited) {
            for (String k : List.of("unit", "requests_per_unit", "algorithm", "burst", "window")) {
                if (f.containsKey(k)) {
                    nodes.problem(
                            f.get(k), "'" + k + "' with 'unlimited: true': an unlimited rule has no limit; remove one");
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
                            where,
                            null);
        }
        Algorithm algorithm = Algorithm.FIXED_WINDOW;
        if (f.containsKey("algorithm")) {
            try {
                algorithm = Algorithm.fromConfigName(nodes.string(f.get("algorithm"), "algorithm"));
            } catch (IllegalArgumentException e) {
                nodes.problem(f.get("algorithm"), e.getMessage());
            }
        }
        Long rpu = null;
        if (!f.containsKey("requests_per_unit")) {
            nodes.problem(
                    node,
                    "'rate_limit' without 'requests_per_unit': say how many requests, e.g. 'requests_per_unit: 100'"
                            + " (or 'unlimited: true')");
        } else {
            rpu = nodes.integer(f.get("requests_per_unit"), "requests_per_unit");
            if (rpu != null && rpu < 0) {
                nodes.problem(
                        f.get("requests_per_unit"),
                        "'requests_per_unit' " + rpu + " is negative: use 0 (block) or more");
                rpu = null;
            }
        }
        String unit = null;
        Duration window = null;
        if (f.containsKey("unit") && f.containsKey("window")) {
            nodes.problem(
                    f.get("window"),
                    "both 'unit' and 'window': give one ('window: 90s' is any length, 'unit' is envoy's)");
        } else if (f.containsKey("unit")) {
            unit = nodes.string(f.get("unit"), "unit");
            if (unit != null) {
                unit = unit.toLowerCase(Locale.ROOT);
                try {
                    window = RateUnit.fromConfigName(unit).length();
                } catch (IllegalArgumentException e) {
                    nodes.problem(
                            f.get("unit"),
                            "unknown unit " + Messages.quote(unit) + ": use one of " + RateUnit.names()
                                    + ", or 'window: 90s' for any length");
                }
            }
        } else if (f.containsKey("window")) {
            try {
                window = Durations.parse(nodes.string(f.get("window"), "window"));
            } catch (IllegalArgumentException e) {
                nodes.problem(f.get("window"), e.getMessage());
            }
        } else {
            nodes.problem(node, "'rate_limit' without 'unit' or 'window': e.g. 'unit: second' or 'window: 90s'");
        }
        Long burst = null;
        if (f.containsKey("burst")) {
            burst = nodes.integer(f.get("burst"), "burst");
            if (!algorithm.isTat()) {
                nodes.problem(
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
                    where,
                    null);
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
                    where,
                    null);
        } catch (IllegalArgumentException e) {
            nodes.problem(node, e.getMessage());
            return null;
        }
    }

    /** The names in {@code replaces}; {@code ownName} is the rule's own {@code name} (may be null). */
    private List<String> replaces(@Nullable Node node, @Nullable String ownName) {
        if (node == null || RuleNodes.isNull(node)) {
            return List.of();
        }
        if (!(node instanceof SequenceNode seq)) {
            nodes.problem(node, "'replaces' must be a list of '- name: …' entries");
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (Node item : seq.getValue()) {
            Map<String, Node> f = nodes.mapping(item, "a 'replaces' entry", Set.of("name"));
            if (f == null) {
                continue;
            }
            String n = nodes.string(f.get("name"), "name");
            if (n == null || n.isEmpty()) {
                nodes.problem(item, "'replaces' entry without a 'name': name the rate_limit it replaces");
            } else if (n.equals(ownName)) {
                nodes.problem(
                        item,
                        "replaces should not contain name of same descriptor: " + Messages.quote(n) + " is this "
                                + "rate_limit's own name; name the rate_limit of another descriptor");
            } else {
                out.add(n);
            }
        }
        return List.copyOf(out);
    }
}
