package dev.sluice.server.config;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * {@link RulesParser}'s reading of YAML nodes: each reader checks a node's shape (a mapping of known keys, a single
 * value, a flag, a whole number), reports a precise problem with the file and line when it is wrong, and returns
 * null (false for a flag) so that parsing goes on and every problem is collected.
 */
final class RuleNodes {
    private final String source;
    private final List<String> problems;
    /** Where each key belongs, for the problem of a known key in the wrong place. */
    private final Map<String, String> places;

    RuleNodes(String source, List<String> problems, Map<String, String> places) {
        this.source = source;
        this.problems = problems;
        this.places = places;
    }

    @Nullable
    Map<String, Node> mapping(Node node, String what, Set<String> allowed) {
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
                String place = places.get(key);
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

    @Nullable
    String string(@Nullable Node node, String what) {
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
    boolean bool(@Nullable Node node, String what) {
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
    static boolean isNull(@Nullable Node node) {
        return node instanceof ScalarNode s && Tag.NULL.equals(s.getTag());
    }

    @Nullable
    Long integer(@Nullable Node node, String what) {
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

    static int lineOf(String problem) {
        Matcher m = Pattern.compile(":(\\d+): ").matcher(problem);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    void problem(@Nullable Node node, @Nullable String message) {
        problems.add(where(node) + ": " + Messages.abbreviateQuoted(String.valueOf(message)));
    }

    /** A last bound for messages that quote without quotes (SnakeYAML's: "found undefined alias <name>"). */
    static String capped(String problem) {
        return problem.length() <= 600 ? problem : problem.substring(0, 600) + "… (cut)";
    }

    private static String quote(String value) {
        return Messages.quote(value);
    }

    String where(@Nullable Node node) {
        return node == null ? source : source + ":" + (node.getStartMark().getLine() + 1);
    }
}
