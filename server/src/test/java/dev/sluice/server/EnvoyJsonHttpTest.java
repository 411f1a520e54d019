package dev.sluice.server;

import static dev.sluice.server.BadInputHttpTest.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * envoyproxy/ratelimit's HTTP endpoints (src/server/server_impl.go {@code NewJsonHandler}, src/server/health.go)
 * over real HTTP: {@code POST /json} reads its {@code RateLimitRequest} as protobuf JSON (proto and lowerCamelCase
 * names) and answers the {@code RateLimitResponse} gRPC would, 200, 429 over the limit, 400 for anything that is no
 * valid request; {@code GET /healthcheck} is {@code OK}. The rules are envoy's own integration-test files, verbatim.
 * What the answers must say field by field is {@link EnvoyCompatibilityTest}'s business; here it is the endpoint.
 */
class EnvoyJsonHttpTest {
    static final String BASIC = "envoy-upstream/test/integration/runtime/current/ratelimit/config/basic.yaml";
    static final String ANOTHER = "envoy-upstream/test/integration/runtime/current/ratelimit/config/another.yaml";

    static TestServer s;
    static ManagedChannel channel;
    static RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    @BeforeAll
    static void start() {
        s = TestServer.start(BASIC, ANOTHER);
        channel = NettyChannelBuilder.forAddress(
                        "127.0.0.1", s.server.grpcAddress().getPort())
                .usePlaintext()
                .build();
        rls = RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        s.close();
    }

    static TestServer.Resp json(TestServer server, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.base + "/json"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return TestServer.send(b.build());
    }

    static TestServer.Resp json(String body, String... headers) {
        return json(s, body, headers);
    }

    /** The body as the message protojson would read it back. */
    static RateLimitResponse parse(String body) {
        RateLimitResponse.Builder b = RateLimitResponse.newBuilder();
        try {
            JsonFormat.parser().merge(body, b);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError("not a RateLimitResponse: " + body, e);
        }
        return b.build();
    }

    static String one(String domain, String key, String value) {
        return "{\"domain\":\"" + domain + "\",\"descriptors\":[{\"entries\":[{\"key\":\"" + key + "\",\"value\":\""
                + value + "\"}]}]}";
    }

    static RateLimitRequest grpcRequest(String domain, String key, String value) {
        return RateLimitRequest.newBuilder()
                .setDomain(domain)
                .setHitsAddend(1)
                .addDescriptors(RateLimitDescriptor.newBuilder()
                        .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                .setKey(key)
                                .setValue(value)))
                .build();
    }

    @Test
    void anAllowedRequestIs200WithTheResponseAsProtobufJson() {
        TestServer.Resp r = json(one("basic", "key1", "json-ok"));
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        JsonNode j = r.json();
        // protojson.Marshal: lowerCamelCase names, enums by name, durations as strings, defaults left out
        assertThat(j.get("overallCode").asText()).isEqualTo("OK");
        JsonNode st = j.get("statuses").get(0);
        assertThat(st.get("code").asText()).isEqualTo("OK");
        assertThat(st.get("currentLimit").get("requestsPerUnit").asLong()).isEqualTo(50);
        assertThat(st.get("currentLimit").get("unit").asText()).isEqualTo("SECOND");
        assertThat(st.get("limitRemaining").asLong()).isEqualTo(49);
        assertThat(st.get("durationUntilReset").asText()).isEqualTo("1s");
        assertThat(r.body())
                .doesNotContain("overall_code")
                .doesNotContain("limit_remaining")
                .doesNotContain(" ")
                .doesNotContain("rawBody");
        // exactly what gRPC answers to the same traffic (another value of the same key: its own fresh counter)
        RateLimitResponse grpc = rls.shouldRateLimit(grpcRequest("basic", "key1", "grpc-ok"));
        assertThat(parse(r.body())).isEqualTo(grpc);
    }

    @Test
    void overTheLimitIs429() {
        for (int i = 0; i < 20; i++) {
            TestServer.Resp r = json(one("another", "key2", "json-over"));
            assertThat(r.status()).as("request %d: %s", i + 1, r.body()).isEqualTo(200);
            assertThat(parse(r.body()).getStatuses(0).getLimitRemaining()).isEqualTo(20 - (i + 1));
        }
        TestServer.Resp over = json(one("another", "key2", "json-over"));
        assertThat(over.status()).as(over.body()).isEqualTo(429);
        assertThat(over.header("Content-Type")).isEqualTo("application/json");
        RateLimitResponse r = parse(over.body());
        assertThat(r.getOverallCode()).isEqualTo(RateLimitResponse.Code.OVER_LIMIT);
        assertThat(r.getStatuses(0).getCode()).isEqualTo(RateLimitResponse.Code.OVER_LIMIT);
        assertThat(r.getStatuses(0).getLimitRemaining()).isZero();
    }

    @Test
    void protoNamesAndLowerCamelCaseAreBothRead() {
        // protojson.Unmarshal reads a field under its JSON name or its .proto name; uint64 and uint32 as numbers or
        // strings; the UInt64Value of a descriptor's hits_addend as its bare value
        String proto = "{\"domain\":\"another\",\"hits_addend\":2,\"descriptors\":["
                + "{\"entries\":[{\"key\":\"key2\",\"value\":\"proto\"}],\"hits_addend\":3},"
                + "{\"entries\":[{\"key\":\"key3\",\"value\":\"proto\"}]},"
                + "{\"entries\":[{\"key\":\"key4\",\"value\":\"proto\"}],\"limit\":{\"requests_per_unit\":5,\"unit\":\"MINUTE\"}}]}";
        String camel = "{\"domain\":\"another\",\"hitsAddend\":\"2\",\"descriptors\":["
                + "{\"entries\":[{\"key\":\"key2\",\"value\":\"camel\"}],\"hitsAddend\":\"3\"},"
                + "{\"entries\":[{\"key\":\"key3\",\"value\":\"camel\"}]},"
                + "{\"entries\":[{\"key\":\"key4\",\"value\":\"camel\"}],\"limit\":{\"requestsPerUnit\":5,\"unit\":2}}]}";
        TestServer.Resp a = json(proto);
        TestServer.Resp b = json(camel);
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(b.status()).as(b.body()).isEqualTo(200);
        for (RateLimitResponse r : List.of(parse(a.body()), parse(b.body()))) {
            assertThat(r.getStatuses(0).getLimitRemaining())
                    .as("3 hits of the descriptor's own")
                    .isEqualTo(17);
            assertThat(r.getStatuses(1).getLimitRemaining())
                    .as("the request's 2 hits")
                    .isEqualTo(8);
            assertThat(r.getStatuses(2).getCurrentLimit().getRequestsPerUnit())
                    .as("the limit override")
                    .isEqualTo(5);
            assertThat(r.getStatuses(2).getLimitRemaining())
                    .as("5 a minute, less the request's 2")
                    .isEqualTo(3);
        }
        assertThat(parse(a.body())).isEqualTo(parse(b.body()));
    }

    @Test
    void anEntryWithoutValueAndAnyContentTypeAreRead() {
        // server_impl.go's own example: echo '{"domain": "dummy", "descriptors": [{"entries": [{"key": "perday"}]}]}'
        //   | curl -vvvXPOST --data @/dev/stdin localhost:8080/json      (curl --data sends a form Content-Type)
        TestServer.Resp r = TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/json"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(
                        "{\"domain\": \"basic\", \"descriptors\": [{\"entries\": [{\"key\": \"key1\"}]}]}"))
                .build());
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(parse(r.body()).getStatuses(0).getLimitRemaining()).isEqualTo(49);
    }

    @Test
    void aBodyThatIsNoRateLimitRequestIs400() {
        String ok = "\"descriptors\":[{\"entries\":[{\"key\":\"key1\",\"value\":\"x\"}]}]";
        Object[][] cases = {
            {"{", "malformed-json", "not valid JSON"},
            {"", "malformed-json", "the body is empty"},
            {"{\"domain\":\"basic\"," + ok + "} trailing", "malformed-json", "not valid JSON"},
            {"{\"domain\":\"basic\",\"domain\":\"another\"," + ok + "}", "malformed-json", "Duplicate field 'domain'"},
            {"[]", "invalid-type", "must be a JSON object"},
            {"null", "invalid-type", "must be a JSON object"},
            {"{\"domain\":\"basic\"," + ok + ",\"extra\":1}", "unknown-field", "unknown field 'extra' in the body"},
            {
                "{\"domain\":\"basic\",\"descriptors\":[{\"entries\":[{\"key\":\"key1\",\"valeu\":\"x\"}]}]}",
                "unknown-field",
                "unknown field 'valeu' in descriptors[0].entries[0]"
            },
            {"{\"domain\":5," + ok + "}", "invalid-type", "domain must be a string, not a number"},
            {"{\"domain\":\"basic\",\"descriptors\":{}}", "invalid-type", "descriptors must be a list, not an object"},
            {
                "{\"domain\":\"basic\",\"descriptors\":[{\"entries\":[{\"key\":true}]}]}",
                "invalid-type",
                "descriptors[0].entries[0].key must be a string, not a boolean"
            },
            {"{\"domain\":\"basic\",\"hitsAddend\":true," + ok + "}", "invalid-type", "hitsAddend must be a number"},
            {"{\"domain\":\"basic\",\"hitsAddend\":\"x\"," + ok + "}", "invalid-request", "RateLimitRequest"},
            {"{\"domain\":\"basic\",\"hitsAddend\":-1," + ok + "}", "invalid-request", "RateLimitRequest"},
            {"{\"domain\":\"basic\",\"hitsAddend\":1.5," + ok + "}", "invalid-request", "RateLimitRequest"},
            {"{\"domain\":\"basic\",\"hitsAddend\":4294967296," + ok + "}", "invalid-request", "RateLimitRequest"},
            {
                "{\"domain\":\"basic\",\"hits_addend\":1,\"hitsAddend\":1," + ok + "}",
                "invalid-request",
                "RateLimitRequest"
            },
            {
                "{\"domain\":\"basic\",\"descriptors\":[{\"entries\":[{\"key\":\"key1\",\"value\":\"x\"}],"
                        + "\"limit\":{\"requestsPerUnit\":5,\"unit\":\"FORTNIGHT\"}}]}",
                "invalid-request",
                "RateLimitRequest"
            },
        };
        for (Object[] c : cases) {
            TestServer.Resp r = json((String) c[0]);
            assertThat(r.status()).as("%s -> %s", c[0], r.body()).isEqualTo(400);
            assertProblem(r, (String) c[1], (String) c[2]);
        }
    }

    @Test
    void whatEnvoysServiceRefusesIs400() {
        // ratelimit.go: "rate limit domain must not be empty", "rate limit descriptor list must not be empty";
        // NewJsonHandler answers a ShouldRateLimit error with 400
        for (String body : List.of(
                "{\"descriptors\":[{\"entries\":[{\"key\":\"key1\",\"value\":\"x\"}]}]}",
                "{\"domain\":\"\",\"descriptors\":[{\"entries\":[{\"key\":\"key1\",\"value\":\"x\"}]}]}",
                "{\"domain\":\"basic\",\"descriptors\":[]}",
                "{\"domain\":\"basic\"}",
                "{}")) {
            TestServer.Resp r = json(body);
            assertThat(r.status()).as("%s -> %s", body, r.body()).isEqualTo(400);
            assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
            assertThat(r.json().get("status").asInt()).isEqualTo(400);
            assertThat(r.json().get("detail").asText()).isNotBlank().doesNotContain("Exception");
        }
    }

    @Test
    void anOversizedBodyIs413AsElsewhere() {
        String big = "{\"domain\":\"basic\",\"pad\":\"" + "x".repeat(70_000) + "\"}";
        TestServer.Resp r = json(big);
        assertThat(r.status()).isEqualTo(413);
        assertProblem(r, "body-too-large", "exceeds 65536 bytes");
    }

    @Test
    void onlyPostIsAnswered() {
        TestServer.Resp r = s.get("/json");
        assertThat(r.status()).isEqualTo(405);
        assertThat(r.header("Allow")).isEqualTo("POST");
        assertProblem(r, "method-not-allowed", "POST");
    }

    @Test
    void healthcheckIsOkAsText() {
        TestServer.Resp r = s.get("/healthcheck");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("OK");
        assertThat(r.header("Content-Type")).startsWith("text/plain");
        TestServer.Resp post = TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/healthcheck"))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build());
        assertThat(post.status()).isEqualTo(405);
    }

    @Test
    void theTokenIsRequiredOnJsonWhenConfiguredButNotOnHealthcheck() {
        try (TestServer secured = TestServer.start(t -> t.withToken("s3cret"), BASIC)) {
            TestServer.Resp none = json(secured, one("basic", "key1", "t"));
            assertThat(none.status()).isEqualTo(401);
            assertProblem(none, "unauthorized", "missing 'Authorization: Bearer <token>'");
            assertThat(none.header("WWW-Authenticate")).isEqualTo("Bearer");
            assertThat(json(secured, one("basic", "key1", "t"), "Authorization", "Bearer nope")
                            .status())
                    .isEqualTo(401);
            TestServer.Resp ok = json(secured, one("basic", "key1", "t"), "Authorization", "Bearer s3cret");
            assertThat(ok.status()).as(ok.body()).isEqualTo(200);
            assertThat(secured.get("/healthcheck").status()).isEqualTo(200);
        }
    }

    @Test
    void aStoreThatCannotAnswerIs503() {
        try (TestServer down = TestServer.startWith(
                new DownStore(), t -> t.withStore(t.limiter(), "down", Duration.ofSeconds(1)), "envoy/example5.yaml")) {
            TestServer.Resp r = json(down, one("internal", "azure", "x"));
            assertThat(r.status()).as(r.body()).isEqualTo(503);
            assertThat(r.header("Retry-After")).isEqualTo("1");
            assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
            assertThat(r.json().get("type").asText()).startsWith("urn:sluice:problem:store-");
            assertThat(r.json().get("detail").asText()).contains("the down store failed: connection refused");
            TestServer.Resp unlimited = json(down, one("internal", "ldap", "x"));
            assertThat(unlimited.status())
                    .as("unlimited rules need no store: %s", unlimited.body())
                    .isEqualTo(200);
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        // strict semantics: the made-up store's remaining (1 slow, 2 fast) comes back as it is, to tell the answers
        // apart
        try (TestServer slow = TestServer.startWith(
                        new RulesAndOperationsTest.KeyedSlowStore(),
                        t -> t.withStore(t.limiter(), "keyed", Duration.ofSeconds(5))
                                .withEnvoy(new dev.sluice.server.envoy.EnvoyOptions(
                                        dev.sluice.server.config.Semantics.STRICT,
                                        dev.sluice.server.envoy.EnvoyOptions.Headers.NONE,
                                        false)),
                        "envoy/example5.yaml");
                java.net.Socket c = new java.net.Socket(
                        InetAddress.getLoopbackAddress(),
                        slow.server.httpAddress().getPort())) {
            c.setSoTimeout(10_000);
            StringBuilder both = new StringBuilder();
            for (String user : List.of("slow", "fast")) {
                String body = one("internal", "azure", user);
                both.append("POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: ")
                        .append(body.length())
                        .append("\r\n\r\n")
                        .append(body);
            }
            c.getOutputStream().write(both.toString().getBytes(StandardCharsets.US_ASCII));
            c.getOutputStream().flush();
            StringBuilder got = new StringBuilder();
            byte[] buf = new byte[8192];
            while (got.toString().split("HTTP/1.1 200", -1).length - 1 < 2) {
                int n = c.getInputStream().read(buf);
                assertThat(n).as("answers so far: %s", got).isPositive();
                got.append(new String(buf, 0, n, StandardCharsets.US_ASCII));
            }
            String all = got.toString();
            assertThat(all.indexOf("\"limitRemaining\":1"))
                    .as("the slow first request is answered first: %s", all)
                    .isGreaterThan(0)
                    .isLessThan(all.indexOf("\"limitRemaining\":2"));
        }
    }
}
