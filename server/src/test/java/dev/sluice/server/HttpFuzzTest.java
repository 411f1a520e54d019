package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.http.CheckJson;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Fuzzes the HTTP/JSON API of a real server (memory store, every test rules file loaded) over real sockets: random
 * bytes, random JSON, mutations of valid {@code /v1/check}, {@code /v1/peek}, {@code /v1/reserve} and
 * {@code /v1/reset} bodies, and broken HTTP framing. Whatever comes in, the answer arrives within
 * {@link #DEADLINE_MS}, is never a 5xx, every 4xx is a problem+json body with a non-empty detail (naming the field
 * when the input makes that possible), and the server still decides a valid check afterwards. The JSON parser is
 * also fuzzed in-process: it either parses or throws {@link BadRequestException}, nothing else.
 *
 * <p>The number of tries per property is jqwik's default, set for CI in {@code junit-platform.properties}; run
 * longer with {@code -Djqwik.tries.default=20000} (see server/README.md).
 */
class HttpFuzzTest {
    /** No answer within this is a hang: far above the fuzz server's 300 ms read timeout and 2 s idle timeout. */
    static final long DEADLINE_MS = 5_000;

    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final List<String> ROUTES = List.of("/v1/check", "/v1/peek", "/v1/reserve", "/v1/reset");
    static final int MAX_BODY = 16 * 1024;

    /** Valid bodies for check, peek and reset, over the rules the server loads. */
    static final List<String> VALID = List.of(
            "{\"domain\":\"api\",\"descriptors\":[{\"entries\":[{\"key\":\"remote_address\",\"value\":\"10.0.0.1\"}]}]}",
            "{\"domain\":\"api\",\"hits\":2,\"descriptors\":[{\"entries\":[{\"key\":\"plan\",\"value\":\"free\"},"
                    + "{\"key\":\"user\",\"value\":\"42\"}]},{\"entries\":[{\"key\":\"path\",\"value\":\"/login\"}]}]}",
            "{\"domain\":\"example\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"alice\"}],\"hits\":1,"
                    + "\"limit\":{\"algorithm\":\"token_bucket\",\"requests_per_unit\":10,\"unit\":\"second\",\"burst\":20}}]}",
            "{\"domain\":\"algos\",\"hits_addend\":1,\"descriptors\":[{\"entries\":[{\"key\":\"sl\",\"value\":\"a\"}]},"
                    + "{\"entries\":[{\"key\":\"sw\",\"value\":\"b\"}]},{\"entries\":[{\"key\":\"gcra\",\"value\":\"c\"}]}]}",
            "{\"domain\":\"mongo_cps\",\"descriptors\":[{\"entries\":[{\"key\":\"database\",\"value\":\"users\"}],"
                    + "\"limit\":{\"algorithm\":\"sliding_log\",\"requests_per_unit\":5,\"window\":\"90s\"}}]}");
    /** Valid bodies for reserve (one descriptor, token bucket or GCRA, max_wait_ns). */
    static final List<String> VALID_RESERVE = List.of(
            "{\"domain\":\"api\",\"max_wait_ns\":1000000000,\"descriptors\":[{\"entries\":[{\"key\":\"remote_address\","
                    + "\"value\":\"10.0.0.2\"}]}]}",
            "{\"domain\":\"algos\",\"hits\":1,\"max_wait_ns\":0,\"descriptors\":[{\"entries\":[{\"key\":\"gcra\",\"value\":\"r\"}]}]}",
            "{\"domain\":\"x\",\"max_wait_ns\":5,\"descriptors\":[{\"entries\":[{\"key\":\"k\",\"value\":\"v\"}],"
                    + "\"limit\":{\"algorithm\":\"gcra\",\"requests_per_unit\":3,\"window\":\"1s\",\"burst\":2}}]}");
    /** Every field name the API knows, for adding known fields in the wrong place. */
    static final List<String> FIELDS = List.of(
            "domain",
            "descriptors",
            "hits",
            "hits_addend",
            "entries",
            "key",
            "value",
            "limit",
            "algorithm",
            "requests_per_unit",
            "unit",
            "window",
            "burst",
            "max_wait_ns");
    /** Words spliced into bytes: JSON syntax, escapes of lone surrogates, numbers parsers choke on. */
    static final List<String> WORDS = List.of(
            "\"domain\":\"api\",",
            "\"hits\":",
            "\"descriptors\":[",
            "{}",
            "[]",
            "null",
            "true",
            "-0",
            "1e400",
            "-1e-400",
            "99999999999999999999999",
            "9223372036854775808",
            "\\ud800",
            "\\udfff\\ud800",
            "\\u0000",
            "\\",
            "\"",
            "NaN",
            "Infinity",
            "0x10",
            "1_000",
            "/*",
            "//",
            "'",
            "\u00e9",
            "\uD83D\uDE00",
            "\uFEFF",
            ",",
            ":",
            "{\"key\":\"k\",\"value\":\"v\"}");

    static TestServer s;
    static int port;

    @BeforeContainer
    static void start() {
        s = TestServer.start(
                t -> t.withLimits(MAX_BODY, 8, Duration.ofMillis(300), Duration.ofSeconds(2)),
                "sluice-example.yaml",
                "sluice-algorithms.yaml",
                "envoy/example1.yaml",
                "envoy/example2.yaml",
                "envoy/example3.yaml",
                "envoy/example4.yaml",
                "envoy/example5.yaml",
                "envoy/example6.yaml",
                "envoy/example7.yaml",
                "envoy/example8.yaml",
                "envoy/example9.yaml");
        // fuzzed caller-sent limits are many and distinct: let them reach the store instead of the bound
        s.server.service().maxClientLimits(1_000_000);
        port = s.server.httpAddress().getPort();
    }

    @AfterContainer
    static void stop() {
        s.close();
    }

    // ---- properties over HTTP

    @Property
    void randomBytesGetAClearAnswer(@ForAll("routes") String route, @ForAll @Size(max = 3000) byte[] body)
            throws IOException {
        sendAndCheck(route, "application/json", body);
    }

    @Property
    void randomJsonGetsAClearAnswer(@ForAll("routes") String route, @ForAll long seed) throws IOException {
        Random rnd = new Random(seed);
        JsonNode tree = rnd.nextInt(4) == 0 ? randomObjectWithKnownFields(rnd) : randomJson(rnd, 0);
        sendAndCheck(route, "application/json", toBytes(tree));
    }

    @Property
    void mutatedValidBodiesGetAClearAnswer(@ForAll("routes") String route, @ForAll long seed) throws IOException {
        Random rnd = new Random(seed);
        sendAndCheck(route, "application/json", mutatedBody(route, rnd));
    }

    @Property
    void aFieldOfTheWrongTypeIsNamed(@ForAll("routes") String route, @ForAll long seed) throws IOException {
        Random rnd = new Random(seed);
        ObjectNode root = validTree(route, rnd);
        List<Slot> typed = new ArrayList<>();
        for (Slot sl : slots(root)) {
            if (sl.field != null && expectedType(sl.field) != null) {
                typed.add(sl);
            }
        }
        Slot target = typed.get(rnd.nextInt(typed.size()));
        JsonNode wrong = wrongTypeFor(expectedType(target.field), rnd);
        target.set(wrong);
        RawHttp.Answer a = sendAndCheck(route, "application/json", toBytes(root));
        assertThat(a.status())
                .as("%s with %s = %s: %s", route, target.field, wrong, a.body())
                .isEqualTo(400);
        assertThat(detail(a)).as("the problem names the field").contains(target.field);
    }

    @Property
    void anUnknownOrMissingOrDuplicatedFieldIsNamed(@ForAll("routes") String route, @ForAll long seed)
            throws IOException {
        Random rnd = new Random(seed);
        ObjectNode root = validTree(route, rnd);
        String named;
        byte[] body;
        switch (rnd.nextInt(3)) {
            case 0 -> { // an unknown field anywhere
                List<ObjectNode> objects = objects(root);
                named = "x" + Long.toString(rnd.nextLong() & Long.MAX_VALUE, 36);
                objects.get(rnd.nextInt(objects.size())).put(named, rnd.nextInt(3));
                body = toBytes(root);
            }
            case 1 -> { // a required field removed
                List<Slot> required = new ArrayList<>();
                for (Slot sl : slots(root)) {
                    if (sl.field != null && required(route, sl)) {
                        required.add(sl);
                    }
                }
                Slot target = required.get(rnd.nextInt(required.size()));
                named = target.field;
                ((ObjectNode) target.parent).remove(target.field);
                body = toBytes(root);
            }
            default -> { // the same field twice in one object (written as text: a tree cannot hold it)
                List<ObjectNode> objects = objects(root);
                ObjectNode o = objects.get(rnd.nextInt(objects.size()));
                named = o.fieldNames().next();
                String text = JSON.writeValueAsString(root);
                String one = "\"" + named + "\":" + JSON.writeValueAsString(o.get(named));
                String twice = JSON.writeValueAsString(o)
                        .replaceFirst(
                                java.util.regex.Pattern.quote(one),
                                java.util.regex.Matcher.quoteReplacement(one + "," + one));
                body = text.replace(JSON.writeValueAsString(o), twice).getBytes(StandardCharsets.UTF_8);
            }
        }
        RawHttp.Answer a = sendAndCheck(route, "application/json", body);
        assertThat(a.status())
                .as("%s: %s -> %s", route, new String(body, StandardCharsets.UTF_8), a.body())
                .isEqualTo(400);
        assertThat(detail(a)).as("the problem names the field").contains(named);
    }

    @Property
    void brokenHttpFramingGetsAClearAnswer(@ForAll long seed) throws IOException {
        Random rnd = new Random(seed);
        String route = ROUTES.get(rnd.nextInt(ROUTES.size()));
        byte[] body = rnd.nextInt(3) == 0 ? mutatedBody(route, rnd) : validBody(route, rnd);
        String[] methods = {
            "POST",
            "POST",
            "POST",
            "POST",
            "GET",
            "PUT",
            "DELETE",
            "OPTIONS",
            "PATCH",
            "HEAD",
            "post",
            "P\u00d6ST",
            "CONNECT",
            ""
        };
        String method = methods[rnd.nextInt(methods.length)];
        String[] paths = {
            route,
            route,
            route,
            route + "?x=1&y",
            route + "/",
            "/" + route,
            route.toUpperCase(Locale.ROOT),
            route.replace("c", "%63"),
            "/",
            "*",
            route + "#f",
            "/v1/" + "a".repeat(5000),
            "/v1/check\u0000",
            "/healthz",
            "/readyz",
            "/metrics",
            "http://127.0.0.1" + route,
            "/../" + route,
            route + " x"
        };
        String path = paths[rnd.nextInt(paths.length)];
        String[] versions = {
            "HTTP/1.1",
            "HTTP/1.1",
            "HTTP/1.1",
            "HTTP/1.0",
            "HTTP/2.0",
            "HTTP/1.2",
            "HTTP/0.9",
            "http/1.1",
            "HTTP/1.1 x",
            ""
        };
        String version = versions[rnd.nextInt(versions.length)];
        String[] types = {
            "application/json",
            "application/json",
            "application/json; charset=utf-8",
            "APPLICATION/JSON",
            "application/json; charset=latin1",
            "text/plain",
            "",
            "application/problem+json",
            "multipart/form-data; boundary=x",
            "application/x-www-form-urlencoded",
            "*/*",
            "json",
            null,
            null,
            "application/json\u00ff",
            "application/json, text/plain"
        };
        String type = types[rnd.nextInt(types.length)];
        StringBuilder h = new StringBuilder(method)
                .append(' ')
                .append(path)
                .append(version.isEmpty() ? "" : " ")
                .append(version)
                .append("\r\n");
        if (rnd.nextInt(8) != 0) {
            h.append("Host: 127.0.0.1\r\n");
        }
        if (type != null) {
            h.append("Content-Type: ").append(type).append("\r\n");
        }
        byte[] sent = body;
        int framing = rnd.nextInt(15);
        switch (framing) {
            case 0 -> {} // no length at all: no body as far as HTTP/1.1 goes
            case 1 ->
                h.append("Content-Length: ")
                        .append(Math.max(0, body.length - 1 - rnd.nextInt(Math.max(1, body.length))))
                        .append("\r\n");
            case 2 ->
                h.append("Content-Length: ")
                        .append(body.length + 1 + rnd.nextInt(100))
                        .append("\r\n"); // 408
            case 3 -> h.append("Content-Length: -").append(body.length).append("\r\n");
            case 4 -> h.append("Content-Length: ").append("12x").append("\r\n");
            case 5 ->
                h.append("Content-Length: ")
                        .append(body.length)
                        .append("\r\nContent-Length: ")
                        .append(body.length + 3)
                        .append("\r\n");
            case 6 -> h.append("Content-Length: 99999999999999999999\r\n");
            case 7 -> { // proper chunks
                h.append("Transfer-Encoding: chunked\r\n");
                sent = chunked(body, rnd, false);
            }
            case 8 -> { // broken chunks
                h.append("Transfer-Encoding: chunked\r\n");
                sent = chunked(body, rnd, true);
            }
            case 9 -> { // both: request smuggling's favourite
                h.append("Content-Length: ").append(body.length).append("\r\nTransfer-Encoding: chunked\r\n");
                sent = chunked(body, rnd, false);
            }
            case 10 -> h.append("Content-Length: ").append(body.length).append("\r\nExpect: 100-continue\r\n");
            case 11 ->
                h.append("Content-Length: ")
                        .append(body.length)
                        .append("\r\nX-Big: ")
                        .append("b".repeat(9000))
                        .append("\r\n");
            case 12 -> h.append("Content-Length: ").append(body.length).append("\r\nbroken header line\r\n");
            case 13 ->
                h.append("Content-Length: ")
                        .append(body.length)
                        .append("\r\nExpect: ")
                        .append(List.of("200-ok", "100-Continue", "", "x".repeat(3000))
                                .get(rnd.nextInt(4)))
                        .append("\r\n");
            default -> h.append("Content-Length: ").append(body.length).append("\r\n");
        }
        h.append("Connection: close\r\n\r\n");
        byte[] head = h.toString().getBytes(StandardCharsets.UTF_8);
        byte[] request = Mutations.splice(head, head.length, 0, sent);
        RawHttp.Answer a = RawHttp.exchange(port, request, method.equals("HEAD"), DEADLINE_MS);
        assertClear(a, new String(request, StandardCharsets.UTF_8));
        stillServes();
    }

    @Property
    void garbageInsteadOfHttpNeverHangs(@ForAll long seed) throws IOException {
        Random rnd = new Random(seed);
        String route = ROUTES.get(rnd.nextInt(ROUTES.size()));
        byte[] request = rnd.nextBoolean()
                ? Mutations.mutate(
                        RawHttp.post(route, "application/json", validBody(route, rnd)), rnd, 1 + rnd.nextInt(6), WORDS)
                : Mutations.text(rnd, 200).getBytes(StandardCharsets.UTF_8);
        // end the head so the server does not wait for more (that would only measure the idle timeout)
        request = Mutations.splice(request, request.length, 0, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        RawHttp.Answer a = RawHttp.exchange(port, request, false, DEADLINE_MS);
        String shown = new String(request, StandardCharsets.ISO_8859_1);
        assertThat(a.outcome())
                .as("no answer within %d ms to %s", DEADLINE_MS, shown)
                .isNotEqualTo(RawHttp.Outcome.TIMED_OUT);
        if (a.outcome() == RawHttp.Outcome.ANSWERED) {
            assertClear(a, shown);
        }
        stillServes();
    }

    // ---- the parser in-process

    @Property
    void theParserOnlyEverThrowsBadRequest(@ForAll("routes") String route, @ForAll long seed) {
        Random rnd = new Random(seed);
        byte[] body = switch (rnd.nextInt(3)) {
            case 0 -> mutatedBody(route, rnd);
            case 1 -> toBytes(randomJson(rnd, 0));
            default -> toBytes(randomObjectWithKnownFields(rnd));
        };
        try {
            if (route.equals("/v1/reserve")) {
                CheckJson.parseReserve(body, 8);
            } else {
                CheckJson.parse(body, 8);
            }
        } catch (BadRequestException e) {
            assertThat(e.getMessage())
                    .as("the refusal of %s", new String(body, StandardCharsets.UTF_8))
                    .isNotBlank();
            assertThat(e.type()).isNotBlank();
        }
    }

    /** A body of the common shape (the token-stream reading's), to mutate. */
    private static final String PLAIN_SAMPLE = "{\"domain\":\"api\",\"hits\":2,\"descriptors\":[{\"entries\":"
            + "[{\"key\":\"plan\",\"value\":\"free\"},{\"key\":\"user\",\"value\":\"42\"}]},"
            + "{\"entries\":[{\"key\":\"ip\"}],\"hits_addend\":0}]}";

    /** The token-stream reading of the common body and the tree reading agree: same request, or same refusal. */
    @Property
    void theFastParserAgreesWithTheTree(@ForAll long seed) {
        Random rnd = new Random(seed);
        byte[] body = switch (rnd.nextInt(3)) {
            case 0 -> mutatedBody("/v1/check", rnd);
            case 1 -> toBytes(randomObjectWithKnownFields(rnd));
            default -> Mutations.mutate(PLAIN_SAMPLE.getBytes(StandardCharsets.UTF_8), rnd, rnd.nextInt(3), WORDS);
        };
        Object fast;
        Object tree;
        try {
            fast = CheckJson.parse(body, 2);
        } catch (BadRequestException e) {
            fast = e.type() + ": " + e.getMessage();
        }
        try {
            tree = CheckJson.parseTree(body, 2);
        } catch (BadRequestException e) {
            tree = e.type() + ": " + e.getMessage();
        }
        assertThat(fast).as(new String(body, StandardCharsets.UTF_8)).isEqualTo(tree);
    }

    // ---- sending and judging

    @Provide
    Arbitrary<String> routes() {
        return Arbitraries.of(ROUTES);
    }

    static RawHttp.Answer sendAndCheck(String route, String contentType, byte[] body) throws IOException {
        RawHttp.Answer a = RawHttp.exchange(port, RawHttp.post(route, contentType, body), false, DEADLINE_MS);
        assertClear(a, route + " " + new String(body, StandardCharsets.UTF_8));
        stillServes();
        return a;
    }

    /** Answered in time, no 5xx; a 4xx is a problem+json whose detail says something; a 2xx is a decision. */
    static void assertClear(RawHttp.Answer a, String fullInput) {
        String input = RulesFuzzTest.abbreviate(fullInput);
        assertThat(a.outcome())
                .as("answered within %d ms: %s", DEADLINE_MS, input)
                .isEqualTo(RawHttp.Outcome.ANSWERED);
        assertThat(a.status()).as("status for %s; body %s", input, a.body()).isBetween(200, 499);
        if (fullInput.startsWith("HEAD ")) {
            return; // an answer to HEAD has headers only
        }
        if (a.status() == 200 && String.valueOf(a.header("content-type")).startsWith("text/plain")) {
            assertThat(a.body()).as("/metrics for %s", input).contains("# TYPE");
        } else if (a.status() == 200 && String.valueOf(a.header("content-type")).startsWith("text/html")) {
            assertThat(a.body()).as("the dashboard page for %s", input).contains("<title>Sluice");
        } else if (a.status() == 200 && !a.body().contains("overall_code")) {
            assertThat(json(a.body(), input).path("status").asText())
                    .as("/healthz or /readyz for %s", input)
                    .isIn("ok", "ready");
        } else if (a.status() == 200 || a.status() == 429) {
            assertThat(json(a.body(), input).path("overall_code").asText())
                    .as("a decision for %s", input)
                    .isIn("OK", "OVER_LIMIT");
        } else if (a.status() >= 400) {
            assertThat(a.header("content-type"))
                    .as("problem type for %s", input)
                    .isEqualTo("application/problem+json");
            JsonNode p = json(a.body(), input);
            assertThat(p.path("type").asText())
                    .as("problem type of %s for %s", a.body(), input)
                    .startsWith("urn:sluice:problem:");
            assertThat(p.path("status").asInt())
                    .as("problem status of %s for %s", a.body(), input)
                    .isEqualTo(a.status());
            assertThat(p.path("detail").asText())
                    .as("detail for %s", input)
                    .isNotBlank()
                    .doesNotContain("\tat ")
                    .doesNotContain("Exception");
            assertThat(p.path("detail").asText().length())
                    .as("a readable detail: %s", a.body())
                    .isLessThan(1_000);
        }
    }

    private static String detail(RawHttp.Answer a) {
        return json(a.body(), "").path("detail").asText();
    }

    static void stillServes() throws IOException {
        RawHttp.Answer ok = RawHttp.exchange(
                port,
                RawHttp.post("/v1/check", "application/json", VALID.get(0).getBytes(StandardCharsets.UTF_8)),
                false,
                DEADLINE_MS);
        assertThat(ok.outcome()).as("the server still answers a valid check").isEqualTo(RawHttp.Outcome.ANSWERED);
        assertThat(ok.status()).as(ok.body()).isIn(200, 429);
    }

    private static JsonNode json(String body, String input) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new AssertionError("answer to " + input + " is not JSON: " + body, e);
        }
    }

    // ---- inputs

    /** Via a String: lone surrogates become '?' instead of failing the UTF-8 generator. */
    static byte[] toBytes(JsonNode n) {
        try {
            return JSON.writeValueAsString(n).getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static ObjectNode validTree(String route, Random rnd) {
        try {
            return (ObjectNode) JSON.readTree(validBody(route, rnd));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] validBody(String route, Random rnd) {
        List<String> from = route.equals("/v1/reserve") ? VALID_RESERVE : VALID;
        return from.get(rnd.nextInt(from.size())).getBytes(StandardCharsets.UTF_8);
    }

    /** A valid body of the route changed at 1–3 places in its tree, then (sometimes) at the byte level. */
    static byte[] mutatedBody(String route, Random rnd) {
        ObjectNode root = validTree(route, rnd);
        int n = 1 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            List<Slot> slots = slots(root);
            if (slots.isEmpty()) {
                break; // every field removed already
            }
            Slot sl = slots.get(rnd.nextInt(slots.size()));
            switch (rnd.nextInt(7)) {
                case 0 -> sl.remove();
                case 1 -> sl.set(randomJson(rnd, 2));
                case 2 -> sl.set(interesting(rnd));
                case 3 -> {
                    List<ObjectNode> objects = objects(root);
                    objects.get(rnd.nextInt(objects.size()))
                            .set(
                                    rnd.nextBoolean()
                                            ? FIELDS.get(rnd.nextInt(FIELDS.size()))
                                            : Mutations.text(rnd, 12),
                                    interesting(rnd));
                }
                case 4 -> sl.set(nest(sl.get(), 1 + rnd.nextInt(40), rnd));
                case 5 -> { // duplicate a list item: the same descriptor or entry twice
                    if (sl.parent instanceof ArrayNode arr) {
                        arr.add(arr.get(sl.index).deepCopy());
                    }
                }
                default -> { // many descriptors, some the same
                    if (root.get("descriptors") instanceof ArrayNode ds && ds.size() > 0) {
                        int copies = 1 + rnd.nextInt(9);
                        for (int c = 0; c < copies; c++) {
                            ds.add(ds.get(rnd.nextInt(ds.size())).deepCopy());
                        }
                    }
                }
            }
        }
        byte[] b = toBytes(root);
        return rnd.nextInt(3) == 0 ? Mutations.mutate(b, rnd, 1 + rnd.nextInt(4), WORDS) : b;
    }

    /** A place in the tree: an object's field or a list's item. */
    static final class Slot {
        final JsonNode parent;
        final String field;
        final int index;

        Slot(JsonNode parent, String field, int index) {
            this.parent = parent;
            this.field = field;
            this.index = index;
        }

        JsonNode get() {
            return field != null ? parent.get(field) : parent.get(index);
        }

        void set(JsonNode v) {
            if (field != null) {
                ((ObjectNode) parent).set(field, v);
            } else {
                ((ArrayNode) parent).set(index, v);
            }
        }

        void remove() {
            if (field != null) {
                ((ObjectNode) parent).remove(field);
            } else {
                ((ArrayNode) parent).remove(index);
            }
        }
    }

    static List<Slot> slots(JsonNode root) {
        List<Slot> out = new ArrayList<>();
        collect(root, out);
        return out;
    }

    private static void collect(JsonNode n, List<Slot> out) {
        if (n.isObject()) {
            List<String> names = new ArrayList<>();
            n.fieldNames().forEachRemaining(names::add);
            for (String f : names) {
                out.add(new Slot(n, f, -1));
                collect(n.get(f), out);
            }
        } else if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                out.add(new Slot(n, null, i));
                collect(n.get(i), out);
            }
        }
    }

    static List<ObjectNode> objects(JsonNode root) {
        List<ObjectNode> out = new ArrayList<>();
        if (root instanceof ObjectNode o) {
            out.add(o);
        }
        for (Slot sl : slots(root)) {
            if (sl.get() instanceof ObjectNode o) {
                out.add(o);
            }
        }
        return out;
    }

    /** The JSON type a known field must have, or null for one the check does not pin (value may be null). */
    static String expectedType(String field) {
        return switch (field) {
            case "domain", "key", "algorithm", "unit", "window" -> "string";
            case "descriptors", "entries" -> "list";
            case "hits", "hits_addend", "requests_per_unit", "burst", "max_wait_ns" -> "integer";
            case "limit" -> "object";
            default -> null;
        };
    }

    static JsonNode wrongTypeFor(String type, Random rnd) {
        List<JsonNode> options = new ArrayList<>(List.of(
                F.booleanNode(rnd.nextBoolean()), F.arrayNode(), F.objectNode().put("a", 1)));
        if (!type.equals("string")) {
            options.add(F.textNode(rnd.nextBoolean() ? "3" : Mutations.text(rnd, 8)));
        }
        if (!type.equals("integer")) {
            options.add(F.numberNode(rnd.nextInt(100)));
        } else {
            options.add(F.numberNode(1.5));
        }
        return options.get(rnd.nextInt(options.size()));
    }

    /** Fields without which the route's body cannot be decided (every valid body here has them). */
    static boolean required(String route, Slot sl) {
        return switch (sl.field) {
            case "domain", "descriptors", "entries", "key", "requests_per_unit" -> true;
            case "unit", "window" -> true; // a limit needs one of them and has exactly one
            case "max_wait_ns" -> route.equals("/v1/reserve");
            default -> false;
        };
    }

    static JsonNode interesting(Random rnd) {
        return switch (rnd.nextInt(16)) {
            case 0 -> F.numberNode(Long.MAX_VALUE);
            case 1 -> F.numberNode(Long.MIN_VALUE);
            case 2 -> F.numberNode(new BigInteger("9".repeat(1 + rnd.nextInt(45))));
            case 3 -> F.numberNode(new BigDecimal("1e" + (rnd.nextInt(800) - 400)));
            case 4 -> F.numberNode(-1 - rnd.nextInt(3));
            case 5 -> F.numberNode(0);
            case 6 -> F.numberNode(rnd.nextInt(5_000_000));
            case 7 -> F.textNode("");
            case 8 -> F.textNode("k".repeat(4090 + rnd.nextInt(12))); // around the 4096-character key bound
            case 9 -> F.textNode(Mutations.text(rnd, 40));
            case 10 -> F.textNode(Mutations.ODD_TEXT.get(rnd.nextInt(Mutations.ODD_TEXT.size())));
            case 11 -> F.nullNode();
            case 12 ->
                F.textNode(List.of(
                                "token_bucket",
                                "gcra",
                                "sliding_log",
                                "sliding_window",
                                "fixed_window",
                                "second",
                                "minute",
                                "year",
                                "1ms",
                                "0s",
                                "999999999999999999d",
                                "1ns",
                                "292y",
                                "1h30m")
                        .get(rnd.nextInt(14)));
            case 13 -> F.textNode("x".repeat(MAX_BODY + rnd.nextInt(100))); // over the body bound: 413
            case 14 -> F.numberNode(Integer.MAX_VALUE + (long) rnd.nextInt(3) - 1);
            default -> F.booleanNode(rnd.nextBoolean());
        };
    }

    static JsonNode nest(JsonNode inner, int depth, Random rnd) {
        JsonNode n = inner == null ? F.nullNode() : inner;
        for (int i = 0; i < depth; i++) {
            n = rnd.nextBoolean()
                    ? F.arrayNode().add(n)
                    : F.objectNode().set(FIELDS.get(rnd.nextInt(FIELDS.size())), n);
        }
        return n;
    }

    static JsonNode randomJson(Random rnd, int depth) {
        int k = rnd.nextInt(depth > 6 ? 4 : 7);
        return switch (k) {
            case 0 -> F.nullNode();
            case 1 -> F.booleanNode(rnd.nextBoolean());
            case 2 -> rnd.nextBoolean() ? F.numberNode(rnd.nextLong()) : interesting(rnd);
            case 3 -> F.textNode(Mutations.text(rnd, 30));
            case 4, 5 -> {
                ObjectNode o = F.objectNode();
                int n = rnd.nextInt(5);
                for (int i = 0; i < n; i++) {
                    o.set(
                            rnd.nextInt(3) == 0 ? Mutations.text(rnd, 10) : FIELDS.get(rnd.nextInt(FIELDS.size())),
                            randomJson(rnd, depth + 1));
                }
                yield o;
            }
            default -> {
                ArrayNode a = F.arrayNode();
                int n = rnd.nextInt(5);
                for (int i = 0; i < n; i++) {
                    a.add(randomJson(rnd, depth + 1));
                }
                yield a;
            }
        };
    }

    /** A request-shaped object: the right field names with random values of random types. */
    static ObjectNode randomObjectWithKnownFields(Random rnd) {
        ObjectNode root = F.objectNode();
        root.set(
                "domain",
                rnd.nextInt(3) == 0
                        ? randomJson(rnd, 5)
                        : F.textNode(List.of("api", "example", "algos", "mongo_cps", "nope")
                                .get(rnd.nextInt(5))));
        ArrayNode ds = root.putArray("descriptors");
        int n = rnd.nextInt(4);
        for (int i = 0; i < n; i++) {
            ObjectNode d = ds.addObject();
            ArrayNode es = d.putArray("entries");
            int m = 1 + rnd.nextInt(3);
            for (int j = 0; j < m; j++) {
                es.addObject()
                        .put(
                                "key",
                                List.of(
                                                "remote_address",
                                                "plan",
                                                "user",
                                                "path",
                                                "tb",
                                                "gcra",
                                                "sl",
                                                "sw",
                                                "database",
                                                Mutations.text(rnd, 6))
                                        .get(rnd.nextInt(10)))
                        .set("value", rnd.nextInt(4) == 0 ? randomJson(rnd, 5) : F.textNode(Mutations.text(rnd, 10)));
            }
            if (rnd.nextBoolean()) {
                d.set("hits", rnd.nextBoolean() ? F.numberNode(rnd.nextInt(5)) : interesting(rnd));
            }
            if (rnd.nextInt(3) == 0) {
                ObjectNode l = d.putObject("limit");
                for (String f : List.of("algorithm", "requests_per_unit", "unit", "window", "burst")) {
                    if (rnd.nextBoolean()) {
                        l.set(f, rnd.nextBoolean() ? interesting(rnd) : F.numberNode(1 + rnd.nextInt(1000)));
                    }
                }
            }
        }
        if (rnd.nextBoolean()) {
            root.set("max_wait_ns", interesting(rnd));
        }
        return root;
    }

    static byte[] chunked(byte[] body, Random rnd, boolean broken) {
        StringBuilder sb = new StringBuilder();
        String text = new String(body, StandardCharsets.ISO_8859_1);
        int at = 0;
        while (at < text.length()) {
            int len = Math.min(text.length() - at, 1 + rnd.nextInt(64));
            String size = Integer.toHexString(len);
            if (broken && rnd.nextInt(3) == 0) {
                size = List.of("zz", "-1", "ffffffffffff", "", Integer.toHexString(len + 5), "0")
                        .get(rnd.nextInt(6));
            }
            sb.append(size).append("\r\n").append(text, at, at + len).append("\r\n");
            at += len;
        }
        if (!(broken && rnd.nextBoolean())) {
            sb.append("0\r\n\r\n");
        }
        return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    }
}
