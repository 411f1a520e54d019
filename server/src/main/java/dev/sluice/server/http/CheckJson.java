package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.RateUnit;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.Durations;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.CheckRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The JSON of {@code POST /v1/check}.
 *
 * <pre>
 * {"domain": "api",
 *  "hits": 1,                                   optional, default 1; 0 = check only: would 1 more pass?
 *                                               (alias: hits_addend; on /v1/peek: the cost asked about, ≥ 1)
 *  "descriptors": [
 *    {"entries": [{"key": "plan", "value": "free"}, {"key": "user", "value": "42"}],
 *     "hits": 3,                                optional, overrides the request's
 *     "limit": {"algorithm": "token_bucket", "requests_per_unit": 10, "unit": "second", "burst": 20,
 *               "name": "exports"}}            name optional: the limit's identity (its state survives new numbers)
 *  ]}                                           limit is optional: a caller-sent limit instead of the rules
 * </pre>
 * Parsing is strict: unknown fields, wrong types, negative or fractional hits are refused with a message that
 * names the field by its path ({@code descriptors[1].entries[0].value}).
 */
public final class CheckJson {
    static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxNestingDepth(16)
                            .maxNumberLength(40)
                            .maxStringLength(1 << 16)
                            .build())
                    .build())
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private static final Set<String> REQUEST_FIELDS = Set.of("domain", "descriptors", "hits", "hits_addend");
    private static final Set<String> DESCRIPTOR_FIELDS = Set.of("entries", "hits", "hits_addend", "limit");
    private static final Set<String> ENTRY_FIELDS = Set.of("key", "value");
    private static final Set<String> LIMIT_FIELDS =
            Set.of("algorithm", "requests_per_unit", "unit", "window", "burst", "name");
    /** The longest name a caller-sent limit may have. */
    static final int MAX_LIMIT_NAME = 256;
    /** Hits above this are refused outright (no limit has more permits than a window may hold). */
    static final long MAX_HITS = Integer.MAX_VALUE;

    private CheckJson() {}

    /** Parses a request body; throws {@link BadRequestException} naming what is wrong. */
    public static CheckRequest parse(byte[] body, int maxDescriptors) {
        CheckRequest r = PlainCheckJson.parse(body, maxDescriptors);
        return r != null ? r : parseTree(body, maxDescriptors);
    }

    /** {@link #parse(byte[], int)} through the tree alone (the tests compare both ways). */
    public static CheckRequest parseTree(byte[] body, int maxDescriptors) {
        return parse(tree(new ByteArrayInputStream(body)), maxDescriptors, REQUEST_FIELDS);
    }

    private static final Set<String> RESERVE_FIELDS =
            Set.of("domain", "descriptors", "hits", "hits_addend", "max_wait_ns");

    /** A reserve request: a check body with one descriptor and {@code max_wait_ns}. */
    public record Reserve(CheckRequest request, long maxWaitNanos) {}

    public static Reserve parseReserve(byte[] body, int maxDescriptors) {
        JsonNode root = tree(new ByteArrayInputStream(body));
        CheckRequest r = parse(root, maxDescriptors, RESERVE_FIELDS);
        JsonNode w = root.get("max_wait_ns");
        if (w == null || !w.isIntegralNumber() || !w.canConvertToLong() || w.asLong() < 0) {
            throw new BadRequestException(
                    "invalid-request",
                    "'max_wait_ns' must be a whole number of nanoseconds ≥ 0: "
                            + "how long the caller is willing to wait");
        }
        return new Reserve(r, w.asLong());
    }

    static JsonNode tree(InputStream body) {
        return tree(MAPPER.reader(), body, "send a JSON object with 'domain' and 'descriptors'");
    }

    /** Reads a body into a tree with {@code reader}; bad JSON or an empty body is a {@link BadRequestException}. */
    static JsonNode tree(ObjectReader reader, InputStream body, String emptyHint) {
        JsonNode root;
        try {
            root = reader.readTree(body);
        } catch (JsonProcessingException e) {
            throw new BadRequestException(
                    "malformed-json",
                    "the body is not valid JSON: " + e.getOriginalMessage()
                            + (e.getLocation() != null
                                    ? " (line " + e.getLocation().getLineNr() + ", column "
                                            + e.getLocation().getColumnNr() + ")"
                                    : ""));
        } catch (IOException e) {
            throw new BadRequestException("malformed-json", "the body could not be read: " + e.getMessage());
        }
        if (root == null || root.isMissingNode()) {
            throw new BadRequestException("malformed-json", "the body is empty: " + emptyHint);
        }
        return root;
    }

    static CheckRequest parse(JsonNode root, int maxDescriptors, Set<String> fields) {
        object(root, "the body", fields);
        JsonNode domainNode = root.get("domain");
        if (domainNode == null || domainNode.isNull()) {
            throw new BadRequestException("missing-domain", "'domain' is missing: name the rules domain, e.g. \"api\"");
        }
        String domain = text(domainNode, "domain");
        if (domain.isEmpty()) {
            throw new BadRequestException("missing-domain", "'domain' is empty: name the rules domain, e.g. \"api\"");
        }
        long requestHits = hits(root, "", 1);
        JsonNode ds = root.get("descriptors");
        if (ds == null || ds.isNull()) {
            throw new BadRequestException(
                    "missing-descriptors",
                    "'descriptors' is missing: send a list such as "
                            + "[{\"entries\":[{\"key\":\"user\",\"value\":\"42\"}]}]");
        }
        if (!ds.isArray()) {
            throw new BadRequestException("invalid-type", "'descriptors' must be a list, not " + kind(ds));
        }
        if (ds.isEmpty()) {
            throw new BadRequestException("missing-descriptors", "'descriptors' is empty: send at least one");
        }
        if (ds.size() > maxDescriptors) {
            throw new BadRequestException(
                    "too-many-descriptors",
                    ds.size() + " descriptors in one request: at most " + maxDescriptors + " (--max-descriptors)");
        }
        List<CheckRequest.Descriptor> out = new ArrayList<>(ds.size());
        for (int i = 0; i < ds.size(); i++) {
            String at = "descriptors[" + i + "]";
            JsonNode d = ds.get(i);
            object(d, at, DESCRIPTOR_FIELDS);
            JsonNode es = d.get("entries");
            if (es == null || es.isNull()) {
                throw new BadRequestException(
                        "empty-descriptor", at + ".entries is missing: give a list of " + "{\"key\":…,\"value\":…}");
            }
            if (!es.isArray()) {
                throw new BadRequestException("invalid-type", at + ".entries must be a list, not " + kind(es));
            }
            if (es.isEmpty()) {
                throw new BadRequestException(
                        "empty-descriptor", at + ".entries is empty: give at least one " + "{\"key\":…,\"value\":…}");
            }
            List<Entry> entries = new ArrayList<>(es.size());
            for (int j = 0; j < es.size(); j++) {
                String eat = at + ".entries[" + j + "]";
                JsonNode e = es.get(j);
                object(e, eat, ENTRY_FIELDS);
                JsonNode k = e.get("key");
                if (k == null || k.isNull()) {
                    throw new BadRequestException("invalid-entry", eat + ".key is missing");
                }
                String key = text(k, eat + ".key");
                if (key.isEmpty()) {
                    throw new BadRequestException("invalid-entry", eat + ".key is empty");
                }
                JsonNode v = e.get("value");
                String value = v == null || v.isNull() ? "" : text(v, eat + ".value");
                entries.add(new Entry(key, value));
            }
            long hits = hits(d, at + ".", requestHits);
            Limit override = d.has("limit") ? limit(d.get("limit"), at + ".limit") : null;
            out.add(new CheckRequest.Descriptor(List.copyOf(entries), hits, override));
        }
        return new CheckRequest(domain, out);
    }

    private static long hits(JsonNode node, String at, long dflt) {
        JsonNode h = node.get("hits");
        String name = "hits";
        if (h == null) {
            h = node.get("hits_addend");
            name = "hits_addend";
        } else if (node.has("hits_addend")) {
            throw new BadRequestException(
                    "invalid-hits", at + "hits and " + at + "hits_addend are the same field: give one");
        }
        if (h == null || h.isNull()) {
            return dflt;
        }
        if (!h.isIntegralNumber()) {
            throw new BadRequestException(
                    "invalid-hits",
                    at + name + " must be a whole number, not " + kind(h) + (h.isNumber() ? " " + h.asText() : ""));
        }
        if (!h.canConvertToLong() || h.asLong() > MAX_HITS) {
            throw new BadRequestException(
                    "invalid-hits",
                    at + name + " " + h.asText() + " is too large: at most " + MAX_HITS
                            + " and never more than the limit's capacity");
        }
        long v = h.asLong();
        if (v < 0) {
            throw new BadRequestException(
                    "invalid-hits", at + name + " " + v + " is negative: use 0 (check only) or more");
        }
        return v;
    }

    private static Limit limit(JsonNode n, String at) {
        object(n, at, LIMIT_FIELDS);
        try {
            Algorithm algorithm = n.has("algorithm")
                    ? Algorithm.fromConfigName(text(n.get("algorithm"), at + ".algorithm"))
                    : Algorithm.FIXED_WINDOW;
            JsonNode rpuNode = n.get("requests_per_unit");
            if (rpuNode == null || !rpuNode.isIntegralNumber() || !rpuNode.canConvertToLong() || rpuNode.asLong() < 1) {
                throw new BadRequestException("invalid-limit", at + ".requests_per_unit must be a whole number ≥ 1");
            }
            Duration window;
            if (n.has("unit") == n.has("window")) {
                throw new BadRequestException(
                        "invalid-limit",
                        at + " needs exactly one of 'unit' (second … year) or 'window' (e.g. \"90s\")");
            } else if (n.has("unit")) {
                String u = text(n.get("unit"), at + ".unit").toLowerCase(Locale.ROOT);
                try {
                    window = RateUnit.fromConfigName(u).length();
                } catch (IllegalArgumentException e) {
                    throw new BadRequestException(
                            "invalid-limit", at + ".unit '" + u + "' is unknown: use one of " + RateUnit.names());
                }
            } else {
                window = Durations.parse(text(n.get("window"), at + ".window"));
            }
            Long burst = null;
            if (n.has("burst")) {
                JsonNode b = n.get("burst");
                if (!b.isIntegralNumber() || !b.canConvertToLong()) {
                    throw new BadRequestException("invalid-limit", at + ".burst must be a whole number");
                }
                burst = b.asLong();
            }
            Limit limit = new LimitSpec(algorithm, rpuNode.asLong(), window, burst).toLimit();
            return n.has("name") ? limit.named(name(n.get("name"), at + ".name")) : limit;
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("invalid-limit", at + ": " + e.getMessage());
        }
    }

    /** A caller-sent limit's name: its identity, whose state survives a change of the limit's numbers. */
    private static String name(JsonNode n, String at) {
        String name = text(n, at);
        if (name.isEmpty() || name.length() > MAX_LIMIT_NAME) {
            throw new BadRequestException(
                    "invalid-limit",
                    at + " has " + name.length() + " characters: give a name of 1 to " + MAX_LIMIT_NAME
                            + ", or none for a limit identified by its numbers");
        }
        return name;
    }

    static void object(JsonNode n, String at, Set<String> allowed) {
        if (n == null || !n.isObject()) {
            throw new BadRequestException("invalid-type", at + " must be a JSON object, not " + kind(n));
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!allowed.contains(f)) {
                throw new BadRequestException(
                        "unknown-field",
                        "unknown field '" + f + "' in " + at + ": expected "
                                + String.join(", ", allowed.stream().sorted().toList()));
            }
        }
    }

    static String text(JsonNode n, String at) {
        if (!n.isTextual()) {
            throw new BadRequestException("invalid-type", at + " must be a string, not " + kind(n));
        }
        return n.textValue();
    }

    /** What a JSON value is, for messages: "a string", "a list", "null", … */
    static String kind(JsonNode n) {
        if (n == null || n.isNull()) {
            return "null";
        }
        if (n.isTextual()) {
            return "a string";
        }
        if (n.isNumber()) {
            return "a number";
        }
        if (n.isBoolean()) {
            return "a boolean";
        }
        if (n.isArray()) {
            return "a list";
        }
        return n.isObject() ? "an object" : n.getNodeType().name().toLowerCase(Locale.ROOT);
    }
}
