package dev.sluice.server;

import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code.OK;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code.OVER_LIMIT;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.DAY;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.HOUR;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.MINUTE;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.SECOND;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.UInt64Value;
import com.google.protobuf.Value;
import dev.sluice.server.config.Semantics;
import dev.sluice.server.envoy.EnvoyOptions;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Sluice as a drop-in for envoyproxy/ratelimit: envoy's own integration-test and example configurations, loaded
 * verbatim (src/test/resources/envoy-upstream, same paths as in envoy's repository; envoy-readme holds the YAML
 * blocks of envoy's README verbatim), answered through a real gRPC client against a running server, and every answer
 * compared as a whole {@link RateLimitResponse} with the one envoy gives, as envoy's tests do
 * ({@code common.AssertProtoEqual}). Each case names the envoy test, README section or code it comes from.
 *
 * <p>The store is in memory on a manual clock at {@link TestServer#T0}, a multiple of a second, a minute, an hour, a
 * day and a week: envoy's fixed windows start there, and {@code duration_until_reset} is envoy's
 * {@code utils.CalculateReset}, {@code unit_seconds - now_seconds % unit_seconds} in whole seconds (so the full unit at
 * T0). The expectations are envoy's, not Sluice's: where they differ the test fails, and that is the point.
 */
class EnvoyCompatibilityTest {
    static final String CONFIG = "envoy-upstream/test/integration/runtime/current/ratelimit/config/";
    static final String BASIC = CONFIG + "basic.yaml";
    static final String ANOTHER = CONFIG + "another.yaml";
    static final String SHARE_THRESHOLD = CONFIG + "share_threshold.yaml";
    /** The configuration of envoy's docker-compose example and of its integration-test/scripts. */
    static final String EXAMPLE = "envoy-upstream/examples/ratelimit/config/example.yaml";

    static final String MONGO = "envoy-upstream/examples/ratelimit/config/config.yaml";
    static final String README = "envoy-readme/";
    static final long MAX_UINT32 = 0xFFFF_FFFFL;

    // ---------------------------------------------------------------------------------------------------------------
    // the client and the expected messages

    /** A running server and a gRPC client of it. */
    static final class Envoy implements AutoCloseable {
        final TestServer server;
        final ManagedChannel channel;
        final RateLimitServiceGrpc.RateLimitServiceBlockingStub stub;

        private Envoy(TestServer server) {
            this.server = server;
            this.channel = NettyChannelBuilder.forAddress(
                            "127.0.0.1", server.server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
            this.stub = RateLimitServiceGrpc.newBlockingStub(channel);
        }

        static Envoy start(String... resources) {
            return new Envoy(TestServer.start(resources));
        }

        static Envoy start(EnvoyOptions options, String... resources) {
            return new Envoy(TestServer.start(s -> s.withEnvoy(options), resources));
        }

        RateLimitResponse call(RateLimitRequest r) {
            return stub.withDeadlineAfter(30, TimeUnit.SECONDS).shouldRateLimit(r);
        }

        void advance(Duration d) {
            server.clock().advance(d);
        }

        @Override
        public void close() {
            try {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server.close();
        }
    }

    /** A descriptor of {@code key=value} entries (test/common/common.go {@code NewRateLimitRequest}). */
    static RateLimitDescriptor d(String... kvs) {
        RateLimitDescriptor.Builder b = RateLimitDescriptor.newBuilder();
        for (String kv : kvs) {
            String[] p = kv.split("=", 2);
            b.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(p[0]).setValue(p.length > 1 ? p[1] : ""));
        }
        return b.build();
    }

    /** A descriptor with its own {@code hits_addend} ({@code NewRateLimitRequestWithPerDescriptorHitsAddend}). */
    static RateLimitDescriptor d(long hits, String... kvs) {
        return d(kvs).toBuilder().setHitsAddend(UInt64Value.of(hits)).build();
    }

    /** A descriptor with a {@code limit} override, as Envoy sends one from its route's {@code limit} action. */
    static RateLimitDescriptor override(int requestsPerUnit, RateLimitUnit unit, String... kvs) {
        return d(kvs).toBuilder()
                .setLimit(RateLimitDescriptor.RateLimitOverride.newBuilder()
                        .setRequestsPerUnit(requestsPerUnit)
                        .setUnit(unit))
                .build();
    }

    /** A request with {@code hits_addend} 1, as every request of envoy's integration test. */
    static RateLimitRequest req(String domain, RateLimitDescriptor... ds) {
        return req(domain, 1, ds);
    }

    static RateLimitRequest req(String domain, int hits, RateLimitDescriptor... ds) {
        RateLimitRequest.Builder b =
                RateLimitRequest.newBuilder().setDomain(domain).setHitsAddend(hits);
        for (RateLimitDescriptor d : ds) {
            b.addDescriptors(d);
        }
        return b.build();
    }

    /**
     * A limited descriptor's status as envoy's {@code BaseRateLimiter.generateResponseDescriptorStatus} builds it:
     * the rule's limit (no name unless the rule has {@code rate_limit.name}), what remains (0 when over), and the
     * whole seconds to the end of the unit's window (integration_test.go {@code newDescriptorStatus}).
     */
    static DescriptorStatus status(Code code, int requestsPerUnit, Unit unit, long remaining, long resetSeconds) {
        return named("", code, requestsPerUnit, unit, remaining, resetSeconds);
    }

    static DescriptorStatus named(
            String name, Code code, int requestsPerUnit, Unit unit, long remaining, long resetSeconds) {
        return DescriptorStatus.newBuilder()
                .setCode(code)
                .setCurrentLimit(RateLimitResponse.RateLimit.newBuilder()
                        .setName(name)
                        .setRequestsPerUnit(requestsPerUnit)
                        .setUnit(unit))
                .setLimitRemaining((int) remaining)
                .setDurationUntilReset(com.google.protobuf.Duration.newBuilder().setSeconds(resetSeconds))
                .build();
    }

    /** No rule matched, or it was replaced: {@code {code: OK}} and nothing else. */
    static DescriptorStatus ok() {
        return DescriptorStatus.newBuilder().setCode(OK).build();
    }

    /** An {@code unlimited: true} rule: OK, limit_remaining MaxUint32, no current_limit (ratelimit.go). */
    static DescriptorStatus unlimited() {
        return DescriptorStatus.newBuilder()
                .setCode(OK)
                .setLimitRemaining((int) MAX_UINT32)
                .build();
    }

    static RateLimitResponse resp(Code overall, DescriptorStatus... statuses) {
        RateLimitResponse.Builder b = RateLimitResponse.newBuilder().setOverallCode(overall);
        for (DescriptorStatus s : statuses) {
            b.addStatuses(s);
        }
        return b.build();
    }

    static RateLimitResponse withHeaders(RateLimitResponse r, long limit, long remaining, long reset) {
        return r.toBuilder()
                .addResponseHeadersToAdd(
                        HeaderValue.newBuilder().setKey("RateLimit-Limit").setValue(Long.toString(limit)))
                .addResponseHeadersToAdd(
                        HeaderValue.newBuilder().setKey("RateLimit-Remaining").setValue(Long.toString(remaining)))
                .addResponseHeadersToAdd(
                        HeaderValue.newBuilder().setKey("RateLimit-Reset").setValue(Long.toString(reset)))
                .build();
    }

    static RateLimitResponse withMetadata(RateLimitResponse r, Struct metadata) {
        return r.toBuilder().setDynamicMetadata(metadata).build();
    }

    static Value str(String s) {
        return Value.newBuilder().setStringValue(s).build();
    }

    static Value num(double n) {
        return Value.newBuilder().setNumberValue(n).build();
    }

    static Value list(Value... vs) {
        ListValue.Builder b = ListValue.newBuilder();
        for (Value v : vs) {
            b.addValues(v);
        }
        return Value.newBuilder().setListValue(b).build();
    }

    /** A struct of alternating names and values. */
    static Struct struct(Object... kvs) {
        Struct.Builder b = Struct.newBuilder();
        for (int i = 0; i < kvs.length; i += 2) {
            Object v = kvs[i + 1];
            b.putFields(
                    (String) kvs[i],
                    v instanceof Struct s ? Value.newBuilder().setStructValue(s).build() : (Value) v);
        }
        return b.build();
    }

    /** ratelimit.go {@code descriptorToStruct}: {@code entries} as "key=value", {@code hitsAddend} when set. */
    static Struct descriptorStruct(Long hits, String... entries) {
        Value[] es = new Value[entries.length];
        for (int i = 0; i < entries.length; i++) {
            es[i] = str(entries[i]);
        }
        return hits == null ? struct("entries", list(es)) : struct("entries", list(es), "hitsAddend", num(hits));
    }

    static Value structs(Struct... ss) {
        Value[] vs = new Value[ss.length];
        for (int i = 0; i < ss.length; i++) {
            vs[i] = Value.newBuilder().setStructValue(ss[i]).build();
        }
        return list(vs);
    }

    // ---------------------------------------------------------------------------------------------------------------

    /** test/integration/integration_test.go, on its own config files. */
    @Nested
    class IntegrationTest {

        /**
         * {@code testBasicBaseConfig}. envoy loads every file of runtime/current/ratelimit/config; here only the two
         * this test uses, so that it does not depend on share_threshold.yaml loading.
         */
        @Test
        void basicBaseConfig() throws Exception {
            try (Envoy e = Envoy.start(BASIC, ANOTHER)) {
                // an unknown domain: OK, a status with no limit
                assertThat(e.call(req("foo", d("hello=world")))).isEqualTo(resp(OK, ok()));

                assertThat(e.call(req("basic", d("key1=foo")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 49, 1)));

                // "go over limit for a minute limit": 20 OK, then OVER_LIMIT with remaining 0
                String random = "5577006791947779410";
                for (int i = 0; i < 25; i++) {
                    Code code = i >= 20 ? OVER_LIMIT : OK;
                    long remaining = i >= 20 ? 0 : 20 - (i + 1);
                    assertThat(e.call(req("another", d("key2=" + random))))
                            .as("key2, request %d", i + 1)
                            .isEqualTo(resp(code, status(code, 20, MINUTE, remaining, 60)));
                }

                // "limit now against 2 keys in the same domain": key3 (10/hour) is over from the 11th request on, and
                // key2 (20/minute) is still counted on those: envoy counts every descriptor of a request
                random = "8674665223082153551";
                for (int i = 0; i < 15; i++) {
                    Code code = i >= 10 ? OVER_LIMIT : OK;
                    long remaining1 = 20L - (i + 1);
                    long remaining2 = i >= 10 ? 0 : 10 - (i + 1);
                    assertThat(e.call(req("another", d("key2=" + random), d("key3=" + random))))
                            .as("key2 and key3, request %d", i + 1)
                            .isEqualTo(resp(
                                    code,
                                    status(OK, 20, MINUTE, remaining1, 60),
                                    status(code, 10, HOUR, remaining2, 3600)));
                }

                // "Test DurationUntilReset by hitting same key twice", 2 s apart
                RateLimitResponse first = e.call(req("another", d("key4=durTest")));
                e.advance(Duration.ofSeconds(2));
                RateLimitResponse second = e.call(req("another", d("key4=durTest")));
                assertThat(first).isEqualTo(resp(OK, status(OK, 20, DAY, 19, 86_400)));
                assertThat(second).isEqualTo(resp(OK, status(OK, 20, DAY, 18, 86_398)));
            }
        }

        /** basic.yaml's {@code one_per_minute}: the second hit of a minute is over. */
        @Test
        void onePerMinute() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                assertThat(e.call(req("basic", d("one_per_minute=a"))))
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60)));
                assertThat(e.call(req("basic", d("one_per_minute=a"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 1, MINUTE, 0, 60)));
                e.advance(Duration.ofSeconds(60));
                assertThat(e.call(req("basic", d("one_per_minute=a"))))
                        .as("the next minute")
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60)));
            }
        }

        /**
         * utils.CalculateReset: whole seconds, from the time source's {@code UnixNow()} (seconds, truncated):
         * 10.25 s into a minute the reset is 50 s, not 49.75 s; OVER_LIMIT statuses carry it too.
         */
        @Test
        void durationUntilResetIsWholeSecondsToTheEndOfTheUnitsWindow() throws Exception {
            try (Envoy e = Envoy.start(BASIC, ANOTHER)) {
                e.advance(Duration.ofMillis(10_250));
                assertThat(e.call(req("basic", d("one_per_minute=r"))))
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 50)));
                assertThat(e.call(req("basic", d("one_per_minute=r"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 1, MINUTE, 0, 50)));
                assertThat(e.call(req("another", d("key3=r")))).isEqualTo(resp(OK, status(OK, 10, HOUR, 9, 3590)));
                assertThat(e.call(req("basic", d("key1=r")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 49, 1)));
            }
        }

        /** {@code testShareThreshold} (share_threshold.yaml). */
        @Test
        void shareThreshold() throws Exception {
            try (Envoy e = Envoy.start(SHARE_THRESHOLD)) {
                String domain = "share-threshold-test";
                // envoy accepts OK or OVER_LIMIT for these ten; on a fresh counter they are all OK
                for (int i = 0; i < 10; i++) {
                    assertThat(e.call(req(domain, d("files=files/a.pdf"))))
                            .as("files/a.pdf, request %d", i + 1)
                            .isEqualTo(resp(OK, status(OK, 10, HOUR, 9 - i, 3600)));
                }
                // files/b.csv shares the threshold of files/*
                assertThat(e.call(req(domain, d("files=files/b.csv"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 10, HOUR, 0, 3600)));
                // without share_threshold each value has its own
                for (int i = 0; i < 10; i++) {
                    assertThat(e.call(req(domain, d("files_no_share=files_no_share/" + i + "-" + (31 * i)))))
                            .isEqualTo(resp(OK, status(OK, 10, HOUR, 9, 3600)));
                }
            }
        }
    }

    /** README.md, "Configuration" → "Examples", each YAML block verbatim. */
    @Nested
    class ReadmeExamples {

        /** Example 1 (examples/ratelimit/config/config.yaml is the same): each listed value its own 500/s. */
        @Test
        void example1() throws Exception {
            try (Envoy e = Envoy.start(MONGO)) {
                assertThat(e.call(req("mongo_cps", d("database=users"))))
                        .isEqualTo(resp(OK, status(OK, 500, SECOND, 499, 1)));
                assertThat(e.call(req("mongo_cps", d("database=default"))))
                        .isEqualTo(resp(OK, status(OK, 500, SECOND, 499, 1)));
                assertThat(e.call(req("mongo_cps", d("database=other"))))
                        .as("no key-only rule")
                        .isEqualTo(resp(OK, ok()));
            }
        }

        /**
         * Example 2: nested descriptors, a key without value matching any value (each value its own counter), and
         * "rate limit against all matching rules and return an aggregate result; a logical OR".
         */
        @Test
        void example2() throws Exception {
            try (Envoy e = Envoy.start(README + "example2.yaml")) {
                RateLimitDescriptor marketing = d("message_type=marketing", "to_number=2061111111");
                RateLimitDescriptor number = d("to_number=2061111111");
                for (int i = 0; i < 5; i++) {
                    assertThat(e.call(req("messaging", marketing, number)))
                            .as("request %d", i + 1)
                            .isEqualTo(
                                    resp(OK, status(OK, 5, DAY, 4 - i, 86_400), status(OK, 100, DAY, 99 - i, 86_400)));
                }
                // the sixth is over the marketing limit; the number's limit is counted all the same
                assertThat(e.call(req("messaging", marketing, number)))
                        .isEqualTo(resp(
                                OVER_LIMIT, status(OVER_LIMIT, 5, DAY, 0, 86_400), status(OK, 100, DAY, 94, 86_400)));
                assertThat(e.call(req("messaging", number))).isEqualTo(resp(OK, status(OK, 100, DAY, 93, 86_400)));
                assertThat(e.call(req("messaging", d("message_type=marketing", "to_number=2062222222"))))
                        .as("another number, its own counter")
                        .isEqualTo(resp(OK, status(OK, 5, DAY, 4, 86_400)));
            }
        }

        /** Example 3: key+value before key alone; {@code requests_per_unit: 0} is always over. */
        @Test
        void example3() throws Exception {
            try (Envoy e = Envoy.start(README + "example3.yaml")) {
                for (int i = 0; i < 10; i++) {
                    assertThat(e.call(req("edge_proxy_per_ip", d("remote_address=50.0.0.1"))))
                            .isEqualTo(resp(OK, status(OK, 10, SECOND, 9 - i, 1)));
                }
                assertThat(e.call(req("edge_proxy_per_ip", d("remote_address=50.0.0.1"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 10, SECOND, 0, 1)));
                // a hit on 0 per second is 1 > 0: OVER_LIMIT, with the limit that says so
                assertThat(e.call(req("edge_proxy_per_ip", d("remote_address=50.0.0.5"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 0, SECOND, 0, 1)));
                // with another address in the same request: that one is counted all the same
                assertThat(e.call(req("edge_proxy_per_ip", d("remote_address=50.0.0.5"), d("remote_address=50.0.0.2"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 0, SECOND, 0, 1), status(OK, 10, SECOND, 9, 1)));
                assertThat(e.call(req("edge_proxy_per_ip", d("remote_address=50.0.0.2"))))
                        .isEqualTo(resp(OK, status(OK, 10, SECOND, 8, 1)));
            }
        }

        /** Example 4: a rule applies only at the depth of the request's last entry. */
        @Test
        void example4() throws Exception {
            try (Envoy e = Envoy.start(README + "example4-no-match.yaml")) {
                assertThat(e.call(req("example4", d("key=value", "subkey=subvalue"))))
                        .as("would not match")
                        .isEqualTo(resp(OK, ok()));
                assertThat(e.call(req("example4", d("key=value"))))
                        .isEqualTo(resp(OK, status(OK, 300, SECOND, 299, 1)));
            }
            try (Envoy e = Envoy.start(README + "example4.yaml")) {
                assertThat(e.call(req("example4", d("key=value", "subkey=subvalue"))))
                        .as("would match")
                        .isEqualTo(resp(OK, status(OK, 300, SECOND, 299, 1)));
                assertThat(e.call(req("example4", d("key=value"))))
                        .as("a level with no rate_limit")
                        .isEqualTo(resp(OK, ok()));
            }
        }

        /** Example 5: "an OK status code with the LimitRemaining field set to MaxUint32 value". */
        @Test
        void example5() throws Exception {
            try (Envoy e = Envoy.start(README + "example5.yaml")) {
                for (int i = 0; i < 3; i++) {
                    assertThat(e.call(req("internal", d("ldap=anything")))).isEqualTo(resp(OK, unlimited()));
                }
                assertThat(e.call(req("internal", d("ldap=x"), d("azure=x"))))
                        .isEqualTo(resp(OK, unlimited(), status(OK, 100, MINUTE, 99, 60)));
            }
        }

        /** Example 6: shadow_mode answers OK whatever the count, and counts (base_limiter.go). */
        @Test
        void example6() throws Exception {
            try (Envoy e = Envoy.start(README + "example6.yaml")) {
                RateLimitDescriptor a = d("service=auth-service", "user=user-a");
                for (int i = 0; i < 12; i++) {
                    long remaining = i >= 10 ? 0 : 10 - (i + 1);
                    assertThat(e.call(req("example6", a)))
                            .as("user-a, request %d", i + 1)
                            .isEqualTo(resp(OK, status(OK, 10, SECOND, remaining, 1)));
                }
                RateLimitDescriptor b = d("service=auth-service", "user=user-b");
                for (int i = 0; i < 20; i++) {
                    assertThat(e.call(req("example6", b))).isEqualTo(resp(OK, status(OK, 20, SECOND, 19 - i, 1)));
                }
                assertThat(e.call(req("example6", b)))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 20, SECOND, 0, 1)));
            }
        }

        /**
         * Example 7: "(key_1, value_1), (key_2, value_2), (user, bkthomps): 10 / sec since the (key_1, value_1),
         * (user, bkthomps) rule was replaced and this will not affect the 5 / sec limit". A replaced descriptor's
         * status has no limit (ratelimit.go {@code constructLimitsToCheck} sets it to nil); current_limit.name is the
         * rule's {@code rate_limit.name}, empty without one.
         */
        @Test
        void example7() throws Exception {
            try (Envoy e = Envoy.start(README + "example7.yaml")) {
                RateLimitDescriptor one = d("key_1=value_1", "user=bkthomps");
                RateLimitDescriptor two = d("key_2=value_2", "user=bkthomps");
                for (int i = 0; i < 10; i++) {
                    assertThat(e.call(req("example7", one, two)))
                            .as("request %d", i + 1)
                            .isEqualTo(resp(OK, ok(), status(OK, 10, SECOND, 9 - i, 1)));
                }
                assertThat(e.call(req("example7", one, two)))
                        .isEqualTo(resp(OVER_LIMIT, ok(), status(OVER_LIMIT, 10, SECOND, 0, 1)));
                assertThat(e.call(req("example7", one)))
                        .as("the replaced limit was never touched")
                        .isEqualTo(resp(OK, named("specific_limit", OK, 5, SECOND, 4, 1)));
            }
        }

        /** Example 9: wildcards, trailing (also matching nothing after the prefix), in the middle, several. */
        @Test
        void example9() throws Exception {
            try (Envoy e = Envoy.start(README + "example9-trailing.yaml")) {
                for (String v : new String[] {"value1", "value2", "valueXYZ", "value"}) {
                    assertThat(e.call(req("example9", d("key1=" + v))))
                            .as(v)
                            .isEqualTo(resp(OK, status(OK, 20, MINUTE, 19, 60)));
                }
                assertThat(e.call(req("example9", d("key1=value1"))))
                        .as("each value its own counter")
                        .isEqualTo(resp(OK, status(OK, 20, MINUTE, 18, 60)));
                assertThat(e.call(req("example9", d("key1=valu")))).isEqualTo(resp(OK, ok()));
            }
            try (Envoy e = Envoy.start(README + "example9-middle.yaml")) {
                for (String v : new String[] {"/api/123/action", "/api/user-id/action", "/api//action"}) {
                    assertThat(e.call(req("example9", d("path=" + v))))
                            .as(v)
                            .isEqualTo(resp(OK, status(OK, 20, MINUTE, 19, 60)));
                }
                assertThat(e.call(req("example9", d("path=/api/123/other")))).isEqualTo(resp(OK, ok()));
                assertThat(e.call(req("example9", d("path=/api/action"))))
                        .as("prefix and suffix may not overlap")
                        .isEqualTo(resp(OK, ok()));
            }
            try (Envoy e = Envoy.start(README + "example9-multiple.yaml")) {
                for (String v : new String[] {"/api/v1/resource/123/action", "/api/v2/resource/456/action"}) {
                    assertThat(e.call(req("example9", d("route=" + v))))
                            .as(v)
                            .isEqualTo(resp(OK, status(OK, 20, MINUTE, 19, 60)));
                }
                assertThat(e.call(req("example9", d("route=/api/v1/resource/123/other"))))
                        .isEqualTo(resp(OK, ok()));
                assertThat(e.call(req("example9", d("route=/api/v1/other/123/action"))))
                        .isEqualTo(resp(OK, ok()));
            }
        }

        /**
         * Example 11: "If 5 requests are made for files/a.pdf and 5 requests for files/b.csv, a request for
         * files/c.txt will be rate limited"; "If 10 requests are made for files_no_share/a.pdf …, requests for
         * files_no_share/b.csv will still be allowed".
         */
        @Test
        void example11() throws Exception {
            try (Envoy e = Envoy.start(README + "example11.yaml")) {
                for (int i = 0; i < 10; i++) {
                    String file = i < 5 ? "files/a.pdf" : "files/b.csv";
                    assertThat(e.call(req("example11", d("files=" + file))))
                            .isEqualTo(resp(OK, status(OK, 10, HOUR, 9 - i, 3600)));
                }
                assertThat(e.call(req("example11", d("files=files/c.txt"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 10, HOUR, 0, 3600)));
                for (int i = 0; i < 10; i++) {
                    assertThat(e.call(req("example11", d("files_no_share=files_no_share/a.pdf"))))
                            .isEqualTo(resp(OK, status(OK, 10, HOUR, 9 - i, 3600)));
                }
                assertThat(e.call(req("example11", d("files_no_share=files_no_share/b.csv"))))
                        .isEqualTo(resp(OK, status(OK, 10, HOUR, 9, 3600)));
            }
        }
    }

    /**
     * examples/ratelimit/config/example.yaml through the descriptors examples/envoy/proxy.yaml makes of each
     * integration-test/scripts/*.sh request (a {@code request_headers} action whose header is absent drops its
     * descriptor). The scripts run within one minute; the clock stands still here.
     */
    @Nested
    class ExampleConfig {

        /** simple-get.sh: foo: test, baz: shady on /twoheader → only (foo, baz) is sent. */
        @Test
        void simpleGet() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                assertThat(e.call(req("rl", d("foo=test", "baz=shady"))))
                        .isEqualTo(resp(OK, status(OK, 3, MINUTE, 2, 60)));
            }
        }

        /** trigger-ratelimit.sh: (foo: pelle), (baz: not-so-shady), 3 a minute; a rule on foo alone does not apply. */
        @Test
        void triggerRatelimit() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                for (int i = 0; i < 3; i++) {
                    assertThat(e.call(req("rl", d("foo=pelle", "baz=not-so-shady"))))
                            .isEqualTo(resp(OK, status(OK, 3, MINUTE, 2 - i, 60)));
                }
                for (int i = 0; i < 2; i++) {
                    assertThat(e.call(req("rl", d("foo=pelle", "baz=not-so-shady"))))
                            .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 3, MINUTE, 0, 60)));
                }
            }
        }

        /** trigger-shadow-mode-key.sh: (foo: pelle), (baz: shady) is shadow_mode: never over, still counted. */
        @Test
        void triggerShadowModeKey() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                for (int i = 0; i < 6; i++) {
                    assertThat(e.call(req("rl", d("foo=pelle", "baz=shady"))))
                            .as("request %d", i + 1)
                            .isEqualTo(resp(OK, status(OK, 3, MINUTE, Math.max(0, 2 - i), 60)));
                }
            }
        }

        /** value-included-in-stats-key-when-unspecified.sh: (unspec), detailed_metric, 2 a minute. */
        @Test
        void unspecifiedValue() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                assertThat(e.call(req("rl", d("unspec=unspecified_value"))))
                        .isEqualTo(resp(OK, status(OK, 2, MINUTE, 1, 60)));
                assertThat(e.call(req("rl", d("unspec=unspecified_value"))))
                        .isEqualTo(resp(OK, status(OK, 2, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", d("unspec=unspecified_value"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 2, MINUTE, 0, 60)));
            }
        }

        /** unlimited: qux at the top, bay under foo. */
        @Test
        void unlimitedRules() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                assertThat(e.call(req("rl", d("qux=anything"), d("foo=x", "bay=y"), d("foo=x", "baz=z"))))
                        .isEqualTo(resp(OK, unlimited(), unlimited(), status(OK, 1, SECOND, 0, 1)));
            }
        }

        /**
         * replaces.sh, step by step: a replaced descriptor is not evaluated nor counted; a rule with a name reports it
         * in current_limit.name; {@code requests_per_unit: 0} (banned_limit) is over.
         */
        @Test
        void replaces() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                // "Verify that replaces increases the limit": banned_limit is 0 a minute, override replaces it
                RateLimitDescriptor banned = d("foo=bkthomps", "bar=banned");
                assertThat(e.call(req("rl", banned)))
                        .isEqualTo(resp(OVER_LIMIT, named("banned_limit", OVER_LIMIT, 0, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", banned, d("source_cluster=proxy", "destination_cluster=mock"))))
                        .isEqualTo(resp(
                                OVER_LIMIT,
                                named("banned_limit", OVER_LIMIT, 0, MINUTE, 0, 60),
                                status(OK, 1, MINUTE, 0, 60)));
                RateLimitDescriptor override = d("source_cluster=proxy", "destination_cluster=override");
                assertThat(e.call(req("rl", banned, override))).isEqualTo(resp(OK, ok(), status(OK, 2, MINUTE, 1, 60)));
                assertThat(e.call(req("rl", banned, override))).isEqualTo(resp(OK, ok(), status(OK, 2, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", banned, override)))
                        .isEqualTo(resp(OVER_LIMIT, ok(), status(OVER_LIMIT, 2, MINUTE, 0, 60)));

                // "Verify that replaces doesn't affect the original limit": bkthomps (1 a minute) is replaced by
                // destination_cluster bkthomps (2 a minute)
                RateLimitDescriptor myFoo = d("foo=my_foo", "bar=bkthomps");
                RateLimitDescriptor toBkthomps = d("source_cluster=proxy", "destination_cluster=bkthomps");
                assertThat(e.call(req("rl", myFoo, toBkthomps)))
                        .isEqualTo(resp(OK, ok(), status(OK, 2, MINUTE, 1, 60)));
                assertThat(e.call(req("rl", myFoo, toBkthomps)))
                        .isEqualTo(resp(OK, ok(), status(OK, 2, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", myFoo, toBkthomps)))
                        .isEqualTo(resp(OVER_LIMIT, ok(), status(OVER_LIMIT, 2, MINUTE, 0, 60)));
                RateLimitDescriptor elsewhere = d("source_cluster=proxy", "destination_cluster=not_bkthomps");
                assertThat(e.call(req("rl", myFoo, elsewhere)))
                        .isEqualTo(resp(OK, named("bkthomps", OK, 1, MINUTE, 0, 60), ok()));
                assertThat(e.call(req("rl", myFoo, elsewhere)))
                        .isEqualTo(resp(OVER_LIMIT, named("bkthomps", OVER_LIMIT, 1, MINUTE, 0, 60), ok()));
                assertThat(e.call(req("rl", myFoo, toBkthomps)))
                        .isEqualTo(resp(OVER_LIMIT, ok(), status(OVER_LIMIT, 2, MINUTE, 0, 60)));

                // "Verify that replaces can replace multiple descriptors": category account replaces bkthomps and
                // fake_name
                RateLimitDescriptor fake = d("source_cluster=proxy", "destination_cluster=fake");
                RateLimitDescriptor account = d("category=account");
                for (int i = 0; i < 4; i++) {
                    assertThat(e.call(req("rl", myFoo, fake, account)))
                            .as("fiveheader, request %d", i + 1)
                            .isEqualTo(resp(OK, ok(), ok(), status(OK, 4, MINUTE, 3 - i, 60)));
                }
                assertThat(e.call(req("rl", myFoo, fake, account)))
                        .isEqualTo(resp(OVER_LIMIT, ok(), ok(), status(OVER_LIMIT, 4, MINUTE, 0, 60)));
                RateLimitDescriptor foo2 = d("foo=foo_2", "bar=bkthomps");
                assertThat(e.call(req("rl", foo2))).isEqualTo(resp(OK, named("bkthomps", OK, 1, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", foo2)))
                        .isEqualTo(resp(OVER_LIMIT, named("bkthomps", OVER_LIMIT, 1, MINUTE, 0, 60)));
                RateLimitDescriptor foo3 = d("foo=foo_3", "bar=bar_3");
                assertThat(e.call(req("rl", foo3, fake)))
                        .isEqualTo(resp(OK, status(OK, 3, MINUTE, 2, 60), named("fake_name", OK, 2, MINUTE, 1, 60)));
                assertThat(e.call(req("rl", foo3, fake)))
                        .isEqualTo(resp(OK, status(OK, 3, MINUTE, 1, 60), named("fake_name", OK, 2, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", foo3, fake)))
                        .isEqualTo(resp(
                                OVER_LIMIT,
                                status(OK, 3, MINUTE, 0, 60),
                                named("fake_name", OVER_LIMIT, 2, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", myFoo, fake, account)))
                        .isEqualTo(resp(OVER_LIMIT, ok(), ok(), status(OVER_LIMIT, 4, MINUTE, 0, 60)));
            }
        }

        /**
         * quota.sh: (service: service_1) 1 a minute and (service: service_2) 2 a minute, both quota_mode: the
         * answer is OVER_LIMIT only when every quota descriptor is over (ratelimit.go {@code shouldRateLimitWorker});
         * a status over its quota still says OVER_LIMIT.
         */
        @Test
        void quota() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                RateLimitDescriptor s1 = d("service=service_1");
                RateLimitDescriptor s2 = d("service=service_2");
                assertThat(e.call(req("rl", s1, s2)))
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60), status(OK, 2, MINUTE, 1, 60)));
                assertThat(e.call(req("rl", s1, s2)))
                        .isEqualTo(resp(OK, status(OVER_LIMIT, 1, MINUTE, 0, 60), status(OK, 2, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", s1, s2)))
                        .isEqualTo(resp(
                                OVER_LIMIT,
                                status(OVER_LIMIT, 1, MINUTE, 0, 60),
                                status(OVER_LIMIT, 2, MINUTE, 0, 60)));
                e.advance(Duration.ofSeconds(60));
                assertThat(e.call(req("rl", s1, s2)))
                        .as("the next minute")
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60), status(OK, 2, MINUTE, 1, 60)));
            }
        }

        /** ratelimit.go: a non-quota descriptor over its limit makes the answer OVER_LIMIT whatever the quotas say. */
        @Test
        void quotaBesideAnOrdinaryLimit() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                RateLimitDescriptor foo = d("foo=q");
                assertThat(e.call(req("rl", foo))).isEqualTo(resp(OK, status(OK, 2, MINUTE, 1, 60)));
                assertThat(e.call(req("rl", foo))).isEqualTo(resp(OK, status(OK, 2, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", d("service=service_2"), foo)))
                        .isEqualTo(
                                resp(OVER_LIMIT, status(OK, 2, MINUTE, 1, 60), status(OVER_LIMIT, 2, MINUTE, 0, 60)));
                // and the only quota descriptor over is every quota descriptor over: OVER_LIMIT, though the ordinary
                // limit beside it passes
                assertThat(e.call(req("rl", d("service=service_1"), d("foo=q2"))))
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60), status(OK, 2, MINUTE, 1, 60)));
                assertThat(e.call(req("rl", d("service=service_1"), d("foo=q2"))))
                        .isEqualTo(
                                resp(OVER_LIMIT, status(OVER_LIMIT, 1, MINUTE, 0, 60), status(OK, 2, MINUTE, 0, 60)));
            }
        }

        /**
         * token-quota.sh: on the request path (service: service_2) with hits_addend 0 (check only), on the response
         * path the same with 1. envoy adds 0 and compares {@code count > limit}: at exactly the limit the check is OK,
         * so 3 requests pass a limit of 2 and the 4th is refused ("only the 4th request should be rejected").
         */
        @Test
        void tokenQuota() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                RateLimitDescriptor check = d(0, "service=service_2");
                RateLimitDescriptor debit = d(1, "service=service_2");
                for (int i = 0; i < 3; i++) {
                    assertThat(e.call(req("rl", 0, check)))
                            .as("request %d, checked", i + 1)
                            .isEqualTo(resp(OK, status(OK, 2, MINUTE, 2 - i, 60)));
                    Code code = i == 2 ? OVER_LIMIT : OK;
                    assertThat(e.call(req("rl", 0, debit)))
                            .as("request %d, debited", i + 1)
                            .isEqualTo(resp(code, status(code, 2, MINUTE, Math.max(0, 1 - i), 60)));
                }
                assertThat(e.call(req("rl", 0, check)))
                        .as("request 4, checked")
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 2, MINUTE, 0, 60)));
            }
        }

        /**
         * multiservice-tokenquota.sh with RESPONSE_DYNAMIC_METADATA: both services checked (hits_addend 0), the
         * answer's dynamic metadata carries the {@code metadata:} of the rules that passed, merged with the first
         * passed descriptor's values winning (ratelimit.go {@code mergeMetadata}); Envoy routes to the service named
         * there and debits it on the response path. Service 1 takes 2, service 2 takes 3, the 6th is refused.
         */
        @Test
        void multiserviceTokenQuota() throws Exception {
            try (Envoy e = Envoy.start(new EnvoyOptions(Semantics.ENVOY, EnvoyOptions.Headers.NONE, true), EXAMPLE)) {
                String[] routedTo = {"service_1", "service_1", "service_2", "service_2", "service_2"};
                Struct checkedDescriptors = struct(
                        "domain",
                        str("rl"),
                        "descriptors",
                        structs(descriptorStruct(0L, "service=service_1"), descriptorStruct(0L, "service=service_2")));
                for (int i = 0; i < 5; i++) {
                    RateLimitResponse checked =
                            e.call(req("rl", 0, d(0, "service=service_1"), d(0, "service=service_2")));
                    DescriptorStatus s1 =
                            i < 2 ? status(OK, 1, MINUTE, 1 - i, 60) : status(OVER_LIMIT, 1, MINUTE, 0, 60);
                    DescriptorStatus s2 = status(OK, 2, MINUTE, i < 2 ? 2 : 2 - (i - 2), 60);
                    Struct metadata = checkedDescriptors.toBuilder()
                            .putFields(
                                    "metadata",
                                    Value.newBuilder()
                                            .setStructValue(
                                                    struct("service_with_quota", struct("name", str(routedTo[i]))))
                                            .build())
                            .build();
                    assertThat(checked)
                            .as("request %d, checked", i + 1)
                            .isEqualTo(withMetadata(resp(OK, s1, s2), metadata));

                    // the response path's answer (Envoy ignores it): a debit past the quota is over, with no metadata
                    String service = "service=" + routedTo[i];
                    boolean first = routedTo[i].equals("service_1");
                    int limit = first ? 1 : 2;
                    long count = first ? i + 1 : i - 1;
                    Code code = count > limit ? OVER_LIMIT : OK;
                    Struct debitedMetadata =
                            struct("domain", str("rl"), "descriptors", structs(descriptorStruct(1L, service)));
                    if (code == OK) {
                        debitedMetadata = debitedMetadata.toBuilder()
                                .putFields(
                                        "metadata",
                                        Value.newBuilder()
                                                .setStructValue(
                                                        struct("service_with_quota", struct("name", str(routedTo[i]))))
                                                .build())
                                .build();
                    }
                    RateLimitResponse debited = e.call(req("rl", 0, d(1, service)));
                    assertThat(debited)
                            .as("request %d, debited", i + 1)
                            .isEqualTo(withMetadata(
                                    resp(code, status(code, limit, MINUTE, Math.max(0, limit - count), 60)),
                                    debitedMetadata));
                }
                RateLimitResponse sixth = e.call(req("rl", 0, d(0, "service=service_1"), d(0, "service=service_2")));
                assertThat(sixth)
                        .as("request 6: no descriptor passed, no metadata")
                        .isEqualTo(withMetadata(
                                resp(
                                        OVER_LIMIT,
                                        status(OVER_LIMIT, 1, MINUTE, 0, 60),
                                        status(OVER_LIMIT, 2, MINUTE, 0, 60)),
                                checkedDescriptors));
            }
        }
    }

    /** utils.GetHitsAddends and BaseRateLimiter.GetResponseDescriptorStatus. */
    @Nested
    class HitsAddend {

        /** A request's hits_addend is added whole; beyond the limit it is OVER_LIMIT (not an error), and counted. */
        @Test
        void requestHitsAddend() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                assertThat(e.call(req("basic", 5, d("key1=h")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 45, 1)));
                assertThat(e.call(req("basic", 46, d("key1=h"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 50, SECOND, 0, 1)));
                assertThat(e.call(req("basic", 1, d("key1=h"))))
                        .as("51 + 1 > 50: the denied 46 were counted")
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 50, SECOND, 0, 1)));
                e.advance(Duration.ofSeconds(1));
                assertThat(e.call(req("basic", 1, d("key1=h")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 49, 1)));
            }
        }

        /** More hits than the limit in one request: OVER_LIMIT, counted; exactly the limit: OK with 0 left. */
        @Test
        void hitsAboveTheLimit() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                assertThat(e.call(req("basic", 51, d("key1=big"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 50, SECOND, 0, 1)));
                assertThat(e.call(req("basic", 1000, d("key1=bigger"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 50, SECOND, 0, 1)));
                assertThat(e.call(req("basic", 50, d("key1=exact")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 0, 1)));
            }
        }

        /** "If the value is zero (default value if not specified by the caller), use 1 for backward compatibility." */
        @Test
        void requestHitsAddendZeroMeansOne() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                assertThat(e.call(req("basic", 0, d("key1=zero")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 49, 1)));
                assertThat(e.call(req("basic", 0, d("key1=zero")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 48, 1)));
            }
        }

        /** "If the per descriptor hits_addend is set, use that"; the others take the request's. */
        @Test
        void perDescriptorHitsAddend() throws Exception {
            try (Envoy e = Envoy.start(ANOTHER)) {
                assertThat(e.call(req("another", 2, d(3, "key2=pd"), d("key3=pd"))))
                        .isEqualTo(resp(OK, status(OK, 20, MINUTE, 17, 60), status(OK, 10, HOUR, 8, 3600)));
                assertThat(e.call(req("another", 1, d(25, "key2=pd"), d("key3=pd"))))
                        .as("over on the first, counted on the second")
                        .isEqualTo(
                                resp(OVER_LIMIT, status(OVER_LIMIT, 20, MINUTE, 0, 60), status(OK, 10, HOUR, 7, 3600)));
            }
        }

        /**
         * Per-descriptor hits_addend 0 ("means check only by no increment the hits"): envoy adds 0 and compares
         * {@code count > limit}, so it is OK at exactly the limit and OVER_LIMIT only once a hit beyond it was counted.
         */
        @Test
        void hitsAddendZeroChecksOnly() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                RateLimitDescriptor check = d(0, "one_per_minute=c");
                assertThat(e.call(req("basic", check))).isEqualTo(resp(OK, status(OK, 1, MINUTE, 1, 60)));
                assertThat(e.call(req("basic", check)))
                        .as("nothing was taken")
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 1, 60)));
                assertThat(e.call(req("basic", d("one_per_minute=c"))))
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60)));
                assertThat(e.call(req("basic", check)))
                        .as("at exactly the limit")
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60)));
                assertThat(e.call(req("basic", d("one_per_minute=c"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 1, MINUTE, 0, 60)));
                assertThat(e.call(req("basic", check)))
                        .as("beyond it")
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 1, MINUTE, 0, 60)));
                assertThat(e.call(req("basic", d(0, "one_per_minute=never"))))
                        .as("a key never hit")
                        .isEqualTo(resp(OK, status(OK, 1, MINUTE, 1, 60)));
            }
        }
    }

    /**
     * A descriptor's {@code limit} (config_impl.go {@code GetLimit}): used instead of the rules, with no name, no
     * shadow_mode and no quota_mode; current_limit echoes what was sent. It is looked at only in a known domain.
     */
    @Nested
    class LimitOverride {

        @Test
        void theOverrideIsTheLimit() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                RateLimitDescriptor o = override(3, RateLimitUnit.MINUTE, "key1=ovr");
                for (int i = 0; i < 3; i++) {
                    assertThat(e.call(req("basic", o))).isEqualTo(resp(OK, status(OK, 3, MINUTE, 2 - i, 60)));
                }
                assertThat(e.call(req("basic", o))).isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 3, MINUTE, 0, 60)));
                assertThat(e.call(req("basic", override(2, RateLimitUnit.HOUR, "no_rule=here"))))
                        .as("a descriptor no rule matches")
                        .isEqualTo(resp(OK, status(OK, 2, HOUR, 1, 3600)));
            }
        }

        @Test
        void anOverrideInAnUnknownDomainIsNotApplied() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                // GetLimit returns nil for an unknown domain before it looks at the descriptor's limit
                assertThat(e.call(req("foo", override(3, RateLimitUnit.MINUTE, "key1=ovr"))))
                        .isEqualTo(resp(OK, ok()));
            }
        }

        @Test
        void anOverrideOfZeroIsAlwaysOver() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                assertThat(e.call(req("basic", override(0, RateLimitUnit.SECOND, "key1=zero"))))
                        .isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 0, SECOND, 0, 1)));
            }
        }

        /** "When limit override is provided by envoy config, we don't want to enable shadow_mode." */
        @Test
        void anOverrideOfAShadowRuleIsNotShadowed() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                RateLimitDescriptor o = override(1, RateLimitUnit.MINUTE, "foo=pelle", "baz=shady");
                assertThat(e.call(req("rl", o))).isEqualTo(resp(OK, status(OK, 1, MINUTE, 0, 60)));
                assertThat(e.call(req("rl", o))).isEqualTo(resp(OVER_LIMIT, status(OVER_LIMIT, 1, MINUTE, 0, 60)));
            }
        }

        /**
         * limiter/cache_key.go: the counter's key is the domain, the entries as sent and the window's start, whatever
         * the limit: an override of the same unit counts on the rule's counter (an artefact of envoy's keys, kept
         * here as what envoy does).
         */
        @Test
        void anOverrideSharesTheCounterOfTheSameEntriesAndWindow() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                assertThat(e.call(req("basic", d("key1=shared")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 49, 1)));
                assertThat(e.call(req("basic", d("key1=shared")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 48, 1)));
                assertThat(e.call(req("basic", override(3, RateLimitUnit.SECOND, "key1=shared"))))
                        .isEqualTo(resp(OK, status(OK, 3, SECOND, 0, 1)));
                assertThat(e.call(req("basic", d("key1=shared")))).isEqualTo(resp(OK, status(OK, 50, SECOND, 46, 1)));
            }
        }
    }

    /**
     * {@code LIMIT_RESPONSE_HEADERS_ENABLED=true} (README "Custom headers"; ratelimit.go): RateLimit-Limit,
     * RateLimit-Remaining, RateLimit-Reset of the descriptor closest to its limit: the first limited status with the
     * least limit_remaining (strictly less than those before it), except that every non-quota OVER_LIMIT status
     * takes the place, the last one winning; none when no status has a limit.
     */
    @Nested
    class EnvoyHeaders {
        final EnvoyOptions headers = new EnvoyOptions(Semantics.ENVOY, EnvoyOptions.Headers.ENVOY, false);

        @Test
        void oneDescriptor() throws Exception {
            try (Envoy e = Envoy.start(headers, BASIC, ANOTHER)) {
                assertThat(e.call(req("basic", d("key1=h"))))
                        .isEqualTo(withHeaders(resp(OK, status(OK, 50, SECOND, 49, 1)), 50, 49, 1));
                assertThat(e.call(req("basic", d("unknown=h"))))
                        .as("no limit, no headers")
                        .isEqualTo(resp(OK, ok()));
            }
        }

        @Test
        void theLeastRemainingFirstOnTies() throws Exception {
            try (Envoy e = Envoy.start(headers, BASIC, ANOTHER)) {
                assertThat(e.call(req("another", d("key2=h"), d("key3=h"))))
                        .isEqualTo(withHeaders(
                                resp(OK, status(OK, 20, MINUTE, 19, 60), status(OK, 10, HOUR, 9, 3600)), 10, 9, 3600));
                assertThat(e.call(req("another", d("key2=t"), d("key4=t"))))
                        .isEqualTo(withHeaders(
                                resp(OK, status(OK, 20, MINUTE, 19, 60), status(OK, 20, DAY, 19, 86_400)), 20, 19, 60));
            }
        }

        @Test
        void anOverLimitStatusWins() throws Exception {
            try (Envoy e = Envoy.start(headers, BASIC, ANOTHER)) {
                e.call(req("basic", d("one_per_minute=o")));
                assertThat(e.call(req("basic", d("one_per_minute=o"), d("key1=o"))))
                        .isEqualTo(withHeaders(
                                resp(OVER_LIMIT, status(OVER_LIMIT, 1, MINUTE, 0, 60), status(OK, 50, SECOND, 49, 1)),
                                1,
                                0,
                                60));
                e.call(req("another", 10, d("key3=o")));
                assertThat(e.call(req("another", d("key3=o"), d("key2=o"))))
                        .isEqualTo(withHeaders(
                                resp(OVER_LIMIT, status(OVER_LIMIT, 10, HOUR, 0, 3600), status(OK, 20, MINUTE, 19, 60)),
                                10,
                                0,
                                3600));
            }
        }

        @Test
        void twoOverLimitTheLastOneWins() throws Exception {
            try (Envoy e = Envoy.start(headers, ANOTHER)) {
                e.call(req("another", 20, d("key2=w")));
                e.call(req("another", 10, d("key3=w")));
                assertThat(e.call(req("another", d("key2=w"), d("key3=w"))))
                        .isEqualTo(withHeaders(
                                resp(
                                        OVER_LIMIT,
                                        status(OVER_LIMIT, 20, MINUTE, 0, 60),
                                        status(OVER_LIMIT, 10, HOUR, 0, 3600)),
                                10,
                                0,
                                3600));
                assertThat(e.call(req("another", d("key3=w"), d("key2=w"))))
                        .isEqualTo(withHeaders(
                                resp(
                                        OVER_LIMIT,
                                        status(OVER_LIMIT, 10, HOUR, 0, 3600),
                                        status(OVER_LIMIT, 20, MINUTE, 0, 60)),
                                20,
                                0,
                                60));
            }
        }

        @Test
        void resetIsWholeSecondsAtTheServicesClock() throws Exception {
            try (Envoy e = Envoy.start(headers, ANOTHER)) {
                e.advance(Duration.ofMillis(10_500));
                assertThat(e.call(req("another", d("key2=late"))))
                        .isEqualTo(withHeaders(resp(OK, status(OK, 20, MINUTE, 19, 50)), 20, 19, 50));
            }
        }

        @Test
        void unlimitedAndShadowStatuses() throws Exception {
            try (Envoy e = Envoy.start(headers, EXAMPLE)) {
                assertThat(e.call(req("rl", d("qux=u"))))
                        .as("an unlimited status has no limit: no headers")
                        .isEqualTo(resp(OK, unlimited()));
                for (int i = 0; i < 3; i++) {
                    e.call(req("rl", d("foo=s", "baz=shady")));
                }
                assertThat(e.call(req("rl", d("foo=s", "baz=shady"), d("foo=s", "baz=not-so-shady"))))
                        .isEqualTo(withHeaders(
                                resp(OK, status(OK, 3, MINUTE, 0, 60), status(OK, 3, MINUTE, 2, 60)), 3, 0, 60));
            }
        }
    }

    /** {@code RESPONSE_DYNAMIC_METADATA=true} (ratelimit.go {@code ratelimitToMetadata}). */
    @Nested
    class DynamicMetadata {
        final EnvoyOptions metadata = new EnvoyOptions(Semantics.ENVOY, EnvoyOptions.Headers.NONE, true);

        @Test
        void domainDescriptorsAndHitsAddend() throws Exception {
            try (Envoy e = Envoy.start(metadata, BASIC, EXAMPLE)) {
                assertThat(e.call(req("basic", d("key1=m"))))
                        .isEqualTo(withMetadata(
                                resp(OK, status(OK, 50, SECOND, 49, 1)),
                                struct(
                                        "domain",
                                        str("basic"),
                                        "descriptors",
                                        structs(descriptorStruct(null, "key1=m")),
                                        "hitsAddend",
                                        num(1))));
                assertThat(e.call(req("basic", 0, d("key1=m"), d(3, "nothing=here", "more=x"))))
                        .as("hits_addend 0: none")
                        .isEqualTo(withMetadata(
                                resp(OK, status(OK, 50, SECOND, 48, 1), ok()),
                                struct(
                                        "domain",
                                        str("basic"),
                                        "descriptors",
                                        structs(
                                                descriptorStruct(null, "key1=m"),
                                                descriptorStruct(3L, "nothing=here", "more=x")))));
                assertThat(e.call(req("foo", 2, d("a=b"))))
                        .as("an unknown domain too")
                        .isEqualTo(withMetadata(
                                resp(OK, ok()),
                                struct(
                                        "domain",
                                        str("foo"),
                                        "descriptors",
                                        structs(descriptorStruct(null, "a=b")),
                                        "hitsAddend",
                                        num(2))));
            }
        }

        /** The {@code metadata:} of passed descriptors only: not of one over the limit, unlimited or replaced. */
        @Test
        void metadataOfPassedDescriptors() throws Exception {
            try (Envoy e = Envoy.start(metadata, EXAMPLE)) {
                Struct base = struct(
                        "domain",
                        str("rl"),
                        "hitsAddend",
                        num(1),
                        "descriptors",
                        structs(
                                descriptorStruct(null, "service=service_1"),
                                descriptorStruct(null, "service=service_2")));
                assertThat(e.call(req("rl", d("service=service_1"), d("service=service_2"))))
                        .isEqualTo(withMetadata(
                                resp(OK, status(OK, 1, MINUTE, 0, 60), status(OK, 2, MINUTE, 1, 60)),
                                base.toBuilder()
                                        .putFields(
                                                "metadata",
                                                Value.newBuilder()
                                                        .setStructValue(struct(
                                                                "service_with_quota", struct("name", str("service_1"))))
                                                        .build())
                                        .build()));
                assertThat(e.call(req("rl", d("service=service_1"), d("service=service_2"))))
                        .isEqualTo(withMetadata(
                                resp(OK, status(OVER_LIMIT, 1, MINUTE, 0, 60), status(OK, 2, MINUTE, 0, 60)),
                                base.toBuilder()
                                        .putFields(
                                                "metadata",
                                                Value.newBuilder()
                                                        .setStructValue(struct(
                                                                "service_with_quota", struct("name", str("service_2"))))
                                                        .build())
                                        .build()));
                assertThat(e.call(req("rl", d("service=service_1"), d("service=service_2"))))
                        .isEqualTo(withMetadata(
                                resp(
                                        OVER_LIMIT,
                                        status(OVER_LIMIT, 1, MINUTE, 0, 60),
                                        status(OVER_LIMIT, 2, MINUTE, 0, 60)),
                                base));
            }
        }

        @Test
        void offByDefault() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                RateLimitResponse r = e.call(req("rl", d("service=service_1")));
                assertThat(r.hasDynamicMetadata()).isFalse();
                assertThat(r.getResponseHeadersToAddList()).isEmpty();
            }
        }
    }

    /**
     * Sluice's {@code Semantics.STRICT} beside envoy's default on the same traffic. Strict: a denied call consumes
     * nothing and the descriptors of a request are all-or-nothing; on testBasicBaseConfig's traffic that answers
     * what envoy answers with {@code STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true} (its
     * "…WithstopCacheKeyIncrementWhenOverlimitConfig" runs: {@code limitRemaining1 = 10}).
     */
    @Nested
    class StrictBesideEnvoy {
        final EnvoyOptions strict = new EnvoyOptions(Semantics.STRICT, EnvoyOptions.Headers.NONE, false);

        /** testBasicBaseConfig's two keys: key2 keeps being counted (envoy), or stops at 10 left (strict). */
        @Test
        void twoKeysOfTestBasicBaseConfig() throws Exception {
            for (boolean isStrict : new boolean[] {false, true}) {
                try (Envoy e = isStrict ? Envoy.start(strict, ANOTHER) : Envoy.start(ANOTHER)) {
                    for (int i = 0; i < 15; i++) {
                        Code code = i >= 10 ? OVER_LIMIT : OK;
                        long remaining1 = i >= 10 && isStrict ? 10 : 20 - (i + 1);
                        long remaining2 = i >= 10 ? 0 : 10 - (i + 1);
                        assertThat(e.call(req("another", d("key2=s"), d("key3=s"))))
                                .as("%s, request %d", isStrict ? "strict" : "envoy", i + 1)
                                .isEqualTo(resp(
                                        code,
                                        status(OK, 20, MINUTE, remaining1, 60),
                                        status(code, 10, HOUR, remaining2, 3600)));
                    }
                    assertThat(e.call(req("another", d("key2=s"))))
                            .isEqualTo(resp(OK, status(OK, 20, MINUTE, isStrict ? 9 : 4, 60)));
                }
            }
        }

        /** A denied hits_addend is counted by envoy (so the next hit is over too), not by strict. */
        @Test
        void aDeniedCallConsumesNothing() throws Exception {
            for (boolean isStrict : new boolean[] {false, true}) {
                try (Envoy e = isStrict ? Envoy.start(strict, BASIC) : Envoy.start(BASIC)) {
                    String as = isStrict ? "strict" : "envoy";
                    assertThat(e.call(req("basic", 40, d("key1=s"))))
                            .as(as)
                            .isEqualTo(resp(OK, status(OK, 50, SECOND, 10, 1)));
                    RateLimitResponse denied = e.call(req("basic", 20, d("key1=s")));
                    assertThat(denied.getOverallCode()).as(as).isEqualTo(OVER_LIMIT);
                    assertThat(denied.getStatuses(0).getCode()).as(as).isEqualTo(OVER_LIMIT);
                    assertThat(e.call(req("basic", 1, d("key1=s"))))
                            .as(as)
                            .isEqualTo(
                                    isStrict
                                            ? resp(OK, status(OK, 50, SECOND, 9, 1))
                                            : resp(OVER_LIMIT, status(OVER_LIMIT, 50, SECOND, 0, 1)));
                }
            }
        }

        /**
         * Check only at exactly the limit: envoy OK (it compares {@code count > limit}); strict OVER_LIMIT, as
         * POST /v1/check's hits 0 ("would the next request pass?", server/README "Check only").
         */
        @Test
        void checkOnlyAtExactlyTheLimit() throws Exception {
            for (boolean isStrict : new boolean[] {false, true}) {
                try (Envoy e = isStrict ? Envoy.start(strict, BASIC) : Envoy.start(BASIC)) {
                    e.call(req("basic", d("one_per_minute=c")));
                    Code code = isStrict ? OVER_LIMIT : OK;
                    assertThat(e.call(req("basic", d(0, "one_per_minute=c"))))
                            .as(isStrict ? "strict" : "envoy")
                            .isEqualTo(resp(code, status(code, 1, MINUTE, 0, 60)));
                }
            }
        }

        /** README example 2's traffic in a domain of each semantics, on one server (a top-level {@code semantics:}). */
        @Test
        void perDomainSemantics() throws Exception {
            try (Envoy e = Envoy.start(README + "example2.yaml", "envoy-semantics/messaging-strict.yaml")) {
                exampleTwo(e, "messaging", false);
                exampleTwo(e, "messaging_strict", true);
            }
            try (Envoy e = Envoy.start(strict, README + "example2.yaml", "envoy-semantics/messaging-envoy.yaml")) {
                exampleTwo(e, "messaging", true);
                exampleTwo(e, "messaging_envoy", false);
            }
        }

        private void exampleTwo(Envoy e, String domain, boolean isStrict) {
            RateLimitDescriptor marketing = d("message_type=marketing", "to_number=2061111111");
            RateLimitDescriptor number = d("to_number=2061111111");
            for (int i = 0; i < 5; i++) {
                e.call(req(domain, marketing, number));
            }
            assertThat(e.call(req(domain, marketing, number)))
                    .as(domain)
                    .isEqualTo(resp(
                            OVER_LIMIT,
                            status(OVER_LIMIT, 5, DAY, 0, 86_400),
                            status(OK, 100, DAY, isStrict ? 95 : 94, 86_400)));
            assertThat(e.call(req(domain, number)))
                    .as(domain)
                    .isEqualTo(resp(OK, status(OK, 100, DAY, isStrict ? 94 : 93, 86_400)));
        }
    }

    /** The same answers through {@code POST /json} (server_impl.go {@code NewJsonHandler}): protojson, 200 or 429. */
    @Nested
    class Json {

        @Test
        void basicBaseConfigOverJson() throws Exception {
            try (Envoy e = Envoy.start(BASIC, ANOTHER)) {
                TestServer.Resp unknown =
                        EnvoyJsonHttpTest.json(e.server, EnvoyJsonHttpTest.one("foo", "hello", "world"));
                assertThat(unknown.status()).as(unknown.body()).isEqualTo(200);
                assertThat(unknown.body()).isEqualTo("{\"overallCode\":\"OK\",\"statuses\":[{\"code\":\"OK\"}]}");

                TestServer.Resp basic = EnvoyJsonHttpTest.json(e.server, EnvoyJsonHttpTest.one("basic", "key1", "foo"));
                assertThat(basic.status()).isEqualTo(200);
                assertThat(basic.body())
                        .isEqualTo(
                                "{\"overallCode\":\"OK\",\"statuses\":[{\"code\":\"OK\",\"currentLimit\":"
                                        + "{\"requestsPerUnit\":50,\"unit\":\"SECOND\"},\"limitRemaining\":49,\"durationUntilReset\":\"1s\"}]}");

                for (int i = 0; i < 21; i++) {
                    TestServer.Resp r = EnvoyJsonHttpTest.json(e.server, EnvoyJsonHttpTest.one("another", "key2", "j"));
                    Code code = i >= 20 ? OVER_LIMIT : OK;
                    assertThat(r.status()).isEqualTo(i >= 20 ? 429 : 200);
                    assertThat(EnvoyJsonHttpTest.parse(r.body()))
                            .as("request %d", i + 1)
                            .isEqualTo(resp(code, status(code, 20, MINUTE, i >= 20 ? 0 : 19 - i, 60)));
                }
                TestServer.Resp over = EnvoyJsonHttpTest.json(e.server, EnvoyJsonHttpTest.one("another", "key2", "j"));
                assertThat(over.body())
                        .isEqualTo(
                                "{\"overallCode\":\"OVER_LIMIT\",\"statuses\":[{\"code\":\"OVER_LIMIT\","
                                        + "\"currentLimit\":{\"requestsPerUnit\":20,\"unit\":\"MINUTE\"},\"durationUntilReset\":\"60s\"}]}");
            }
        }

        /** server_impl.go's own curl example: a domain envoy does not know, an entry with no value. */
        @Test
        void theCurlExampleOfServerImpl() throws Exception {
            try (Envoy e = Envoy.start(BASIC)) {
                TestServer.Resp r = EnvoyJsonHttpTest.json(
                        e.server, "{\"domain\": \"dummy\", \"descriptors\": [{\"entries\": [{\"key\": \"perday\"}]}]}");
                assertThat(r.status()).as(r.body()).isEqualTo(200);
                assertThat(r.body()).isEqualTo("{\"overallCode\":\"OK\",\"statuses\":[{\"code\":\"OK\"}]}");
            }
        }

        @Test
        void unlimitedAndReplacedOverJson() throws Exception {
            try (Envoy e = Envoy.start(EXAMPLE)) {
                TestServer.Resp r = EnvoyJsonHttpTest.json(
                        e.server,
                        "{\"domain\":\"rl\",\"descriptors\":["
                                + "{\"entries\":[{\"key\":\"qux\",\"value\":\"a\"}]},"
                                + "{\"entries\":[{\"key\":\"foo\",\"value\":\"my_foo\"},{\"key\":\"bar\",\"value\":\"bkthomps\"}]},"
                                + "{\"entries\":[{\"key\":\"category\",\"value\":\"account\"}]}]}");
                assertThat(r.status()).as(r.body()).isEqualTo(200);
                assertThat(r.body())
                        .isEqualTo("{\"overallCode\":\"OK\",\"statuses\":[{\"code\":\"OK\",\"limitRemaining\":"
                                + "4294967295},{\"code\":\"OK\"},{\"code\":\"OK\",\"currentLimit\":{\"requestsPerUnit\":4,\"unit\":"
                                + "\"MINUTE\"},\"limitRemaining\":3,\"durationUntilReset\":\"60s\"}]}");
            }
        }
    }
}
