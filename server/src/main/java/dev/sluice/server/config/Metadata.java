package dev.sluice.server.config;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads a descriptor's {@code metadata:}, an arbitrary nested mapping (envoyproxy/ratelimit turns it into a protobuf
 * {@code Struct} and returns it in the response's dynamic metadata), into plain Java values chosen by each YAML
 * node's resolved tag: {@code !!str} and timestamps (kept as written, as envoy's YAML library does) → String,
 * {@code !!int} → Long (Double past 64 bits: a Struct number is a double anyway), {@code !!float} → Double,
 * {@code !!bool} → Boolean, {@code !!null} → null, lists → List, mappings → Map with String keys (merge keys
 * {@code <<} applied). Collections are unmodifiable and keep the file's order.
 *
 * <p>What a Struct cannot hold is a problem with its line, not a crash: other tags ({@code !!binary}, custom ones),
 * lists or mappings as keys, duplicate keys, and a mapping that contains itself through an alias.
 */
final class Metadata {
    private final BiConsumer<@Nullable Node, String> problems;
    private final Scalars scalars = new Scalars();
    /** The collections being read, outermost first: an alias may point back into them (a cycle). */
    private final Set<Node> walking = Collections.newSetFromMap(new IdentityHashMap<>());

    private Metadata(BiConsumer<@Nullable Node, String> problems) {
        this.problems = problems;
    }

    /**
     * The metadata mapping, or null when {@code node} is absent, null or an empty mapping (envoy: no metadata).
     *
     * @param problems told each problem, with the node it is about
     */
    static @Nullable Map<String, Object> read(@Nullable Node node, BiConsumer<@Nullable Node, String> problems) {
        if (node == null || (node instanceof ScalarNode s && Tag.NULL.equals(s.getTag()))) {
            return null;
        }
        if (!(node instanceof MappingNode)) {
            problems.accept(
                    node,
                    "'metadata' must be a mapping of 'name: value' lines, e.g. "
                            + "'metadata: {team: payments, tier: 2}'");
            return null;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) new Metadata(problems).value(node);
        return m == null || m.isEmpty() ? null : m;
    }

    private @Nullable Object value(Node node) {
        if (node instanceof ScalarNode s) {
            return scalar(s);
        }
        if (!walking.add(node)) {
            problems.accept(
                    node,
                    "'metadata' contains itself through an alias (*name): metadata is a tree; "
                            + "write the nested values out");
            return null;
        }
        try {
            if (node instanceof SequenceNode seq) {
                List<Object> out = new ArrayList<>(seq.getValue().size());
                for (Node item : seq.getValue()) {
                    out.add(value(item));
                }
                return Collections.unmodifiableList(out);
            }
            return mapping((MappingNode) node);
        } finally {
            walking.remove(node);
        }
    }

    private Map<String, Object> mapping(MappingNode node) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Map<?, ?>> merged = new ArrayList<>();
        for (NodeTuple t : node.getValue()) {
            Node k = t.getKeyNode();
            if (Tag.MERGE.equals(k.getTag())) {
                Node v = t.getValueNode();
                for (Node from : v instanceof SequenceNode seq ? seq.getValue() : List.of(v)) {
                    if (from instanceof MappingNode && value(from) instanceof Map<?, ?> m) {
                        merged.add(m);
                    } else if (!(from instanceof MappingNode)) {
                        problems.accept(from, "a merge key ('<<') in 'metadata' takes a mapping or a list of mappings");
                    }
                }
                continue;
            }
            if (!(k instanceof ScalarNode key)) {
                problems.accept(
                        k,
                        "keys in 'metadata' must be plain values (a Struct's keys are strings), "
                                + "not lists or mappings");
                continue;
            }
            if (out.containsKey(key.getValue())) {
                problems.accept(key, "duplicate key " + Messages.quote(key.getValue()) + " in 'metadata'");
                continue;
            }
            out.put(key.getValue(), value(t.getValueNode()));
        }
        for (Map<?, ?> m : merged) { // YAML's merge: the mapping's own keys win, then the earlier merged mapping
            for (Map.Entry<?, ?> e : m.entrySet()) {
                out.putIfAbsent((String) e.getKey(), e.getValue());
            }
        }
        return Collections.unmodifiableMap(out);
    }

    private @Nullable Object scalar(ScalarNode s) {
        Tag tag = s.getTag();
        if (Tag.STR.equals(tag) || Tag.TIMESTAMP.equals(tag)) {
            return s.getValue();
        }
        if (Tag.NULL.equals(tag)) {
            return null;
        }
        if (Tag.BOOL.equals(tag) || Tag.INT.equals(tag) || Tag.FLOAT.equals(tag)) {
            Object o;
            try {
                o = scalars.construct(s);
            } catch (YAMLException | NumberFormatException e) {
                o = null;
            }
            if (o == null) { // an explicit tag on a value that is no such thing, e.g. '!!int abc', '!!bool maybe'
                problems.accept(
                        s,
                        "'metadata' value " + Messages.quote(s.getValue()) + " is not a valid " + tagName(tag)
                                + ": fix it, or quote it to keep it as a string");
                return null;
            }
            if (o instanceof Integer i) {
                return i.longValue();
            }
            if (o instanceof BigInteger b) {
                return b.bitLength() < 64 ? (Object) b.longValue() : (Object) b.doubleValue();
            }
            return o; // Long, Double, Boolean
        }
        problems.accept(
                s,
                "'metadata' value " + Messages.quote(s.getValue()) + " has the tag "
                        + Messages.quote(tag.getValue())
                        + ", which metadata cannot hold: use a string, number, true/false, "
                        + "null, list or mapping");
        return null;
    }

    private static String tagName(Tag tag) {
        return Tag.BOOL.equals(tag) ? "true/false" : Tag.INT.equals(tag) ? "whole number" : "number";
    }

    /** SnakeYAML's own YAML 1.1 reading of booleans and numbers ({@code 0x1F}, {@code 1_000}, {@code .inf}, …). */
    private static final class Scalars extends SafeConstructor {
        Scalars() {
            super(new LoaderOptions());
        }

        Object construct(ScalarNode node) {
            return constructObject(node);
        }
    }
}
