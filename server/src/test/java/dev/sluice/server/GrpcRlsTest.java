package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.UInt64Value;
import dev.sluice.server.config.Semantics;
import dev.sluice.server.envoy.EnvoyOptions;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Envoy's RLS v3 over real gRPC, with a client built from the official protos (io.envoyproxy.controlplane:api). */
class GrpcRlsTest {
    static TestServer s;
    static ManagedChannel channel;
    static RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    @BeforeAll
    static void start() {
        s = TestServer.start(
                "envoy/example2.yaml",
                "envoy/example3.yaml",
                "envoy/example5.yaml",
                "envoy/example6.yaml",
                "sluice-algorithms.yaml");
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

    static RateLimitDescriptor descriptor(String... kvs) {
        RateLimitDescriptor.Builder b = RateLimitDescriptor.newBuilder();
        for (String kv : kvs) {
            String[] p = kv.split("=", 2);
            b.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(p[0]).setValue(p[1]));
        }
        return b.build();
    }

    static RateLimitRequest request(String domain, int hits, RateLimitDescriptor... ds) {
        RateLimitRequest.Builder b =
                RateLimitRequest.newBuilder().setDomain(domain).setHitsAddend(hits);
        for (RateLimitDescriptor d : ds) {
            b.addDescriptors(d);
        }
        return b.build();
    }

    static Map<String, String> headers(RateLimitResponse r) {
        return r.getResponseHeadersToAddList().stream()
                .collect(Collectors.toMap(HeaderValue::getKey, HeaderValue::getValue));
    }

    @Test
    void shouldRateLimitAnswersFieldByFieldAsEnvoy() {
        RateLimitResponse r =
                rls.shouldRateLimit(request("edge_proxy_per_ip", 0, descriptor("remote_address=10.0.0.1")));
        assertThat(r)
                .isEqualTo(RateLimitResponse.newBuilder()
                        .setOverallCode(Code.OK)
                        .addStatuses(RateLimitResponse.DescriptorStatus.newBuilder()
                                .setCode(Code.OK)
                                // an unnamed rule: no name, as envoy (its name is rate_limit.name)
                                .setCurrentLimit(RateLimitResponse.RateLimit.newBuilder()
                                        .setRequestsPerUnit(10)
                                        .setUnit(RateLimitResponse.RateLimit.Unit.SECOND))
                                .setLimitRemaining(9)
                                .setDurationUntilReset(com.google.protobuf.Duration.newBuilder()
                                        .setSeconds(1)))
                        .build());
        assertThat(r.getResponseHeadersToAddList())
                .as("envoy adds no headers by default")
                .isEmpty();

        RateLimitResponse nine =
                rls.shouldRateLimit(request("edge_proxy_per_ip", 9, descriptor("remote_address=10.0.0.1")));
        assertThat(nine.getOverallCode()).isEqualTo(Code.OK);
        assertThat(nine.getStatuses(0).getLimitRemaining()).isZero();
        RateLimitResponse over =
                rls.shouldRateLimit(request("edge_proxy_per_ip", 0, descriptor("remote_address=10.0.0.1")));
        assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(over.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(over.getStatuses(0).getLimitRemaining()).isZero();
        assertThat(over.getStatuses(0).getDurationUntilReset().getSeconds()).isEqualTo(1);
    }

    @Test
    void sluiceHeadersAreOneOptionAway() throws InterruptedException {
        try (TestServer ietf = TestServer.start(
                t -> t.withEnvoy(new EnvoyOptions(Semantics.ENVOY, EnvoyOptions.Headers.IETF, false)),
                "envoy/example3.yaml")) {
            ManagedChannel ch = NettyChannelBuilder.forAddress(
                            "127.0.0.1", ietf.server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
            try {
                var stub = RateLimitServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS);
                RateLimitResponse r =
                        stub.shouldRateLimit(request("edge_proxy_per_ip", 0, descriptor("remote_address=10.0.0.1")));
                assertThat(headers(r))
                        .containsEntry("RateLimit-Policy", "\"edge_proxy_per_ip.remote_address\";q=10;w=1")
                        .containsEntry("RateLimit", "\"edge_proxy_per_ip.remote_address\";r=9;t=1");
                stub.shouldRateLimit(request("edge_proxy_per_ip", 9, descriptor("remote_address=10.0.0.1")));
                RateLimitResponse over =
                        stub.shouldRateLimit(request("edge_proxy_per_ip", 0, descriptor("remote_address=10.0.0.1")));
                assertThat(headers(over)).containsEntry("Retry-After", "1");
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void perDescriptorHitsAddendOverridesTheRequest() {
        RateLimitDescriptor d = descriptor("message_type=marketing", "to_number=555").toBuilder()
                .setHitsAddend(UInt64Value.of(4))
                .build();
        RateLimitResponse r = rls.shouldRateLimit(request("messaging", 1, d, descriptor("to_number=555")));
        assertThat(r.getOverallCode()).isEqualTo(Code.OK);
        assertThat(r.getStatuses(0).getLimitRemaining()).isEqualTo(1);
        // each descriptor's own remaining, read with a peek right after the all-or-nothing decision
        assertThat(r.getStatuses(1).getLimitRemaining()).isEqualTo(99);
        RateLimitResponse alone = rls.shouldRateLimit(request("messaging", 0, descriptor("to_number=555")));
        assertThat(alone.getStatuses(0).getLimitRemaining())
                .as("4 were taken from the nested rule, 1 from this")
                .isEqualTo(98);
        assertThat(r.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.DAY);
    }

    @Test
    void unlimitedReportsMaxUint32AndUnknownKeysAreOk() {
        RateLimitResponse r = rls.shouldRateLimit(request("internal", 0, descriptor("ldap=x"), descriptor("other=y")));
        assertThat(r.getOverallCode()).isEqualTo(Code.OK);
        assertThat(Integer.toUnsignedLong(r.getStatuses(0).getLimitRemaining())).isEqualTo(0xFFFF_FFFFL);
        assertThat(r.getStatuses(1).hasCurrentLimit()).isFalse();
    }

    @Test
    void sluiceWindowsAndAlgorithmsOverGrpc() {
        RateLimitResponse tb = rls.shouldRateLimit(request("algos", 3, descriptor("tb=u1")));
        assertThat(tb.getStatuses(0).getLimitRemaining()).isZero();
        assertThat(tb.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.SECOND);
        assertThat(rls.shouldRateLimit(request("algos", 1, descriptor("tb=u1"))).getOverallCode())
                .isEqualTo(Code.OVER_LIMIT);
        RateLimitResponse sw = rls.shouldRateLimit(request("algos", 1, descriptor("fw90=u1")));
        assertThat(sw.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(RateLimitResponse.RateLimit.Unit.UNKNOWN);
        assertThat(sw.getStatuses(0).getDurationUntilReset().getSeconds()).isEqualTo(90);
    }

    @Test
    void unknownDomainsAndOversizedHitsAnswerAsEnvoyAndBadInputIsInvalidArgument() {
        // envoy: an unknown domain limits nothing (OK, no limit); hits above the limit are simply over it
        assertThat(rls.shouldRateLimit(request("nope", 1, descriptor("a=b"))))
                .isEqualTo(RateLimitResponse.newBuilder()
                        .setOverallCode(Code.OK)
                        .addStatuses(
                                RateLimitResponse.DescriptorStatus.newBuilder().setCode(Code.OK))
                        .build());
        RateLimitResponse big = rls.shouldRateLimit(request("messaging", 101, descriptor("to_number=1")));
        assertThat(big.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(big.getStatuses(0).getLimitRemaining()).isZero();
        assertThat(rls.shouldRateLimit(request("messaging", 1, descriptor("to_number=1")))
                        .getOverallCode())
                .as("envoy counted the 101 denied hits: the day stays over")
                .isEqualTo(Code.OVER_LIMIT);
        assertThatThrownBy(() -> rls.shouldRateLimit(request("messaging", 1)))
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getStatus().getDescription()).contains("'descriptors' is empty");
                });
        assertThatThrownBy(() -> rls.shouldRateLimit(request("", 1, descriptor("a=b"))))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getDescription()).contains("'domain' is missing"));
    }

    /** envoyproxy/ratelimit serves grpc.health.v1.Health ("" and "ratelimit"): Envoy's gRPC health checks work here too. */
    @Test
    void grpcHealthIsServingWithoutAToken() throws InterruptedException {
        var health = HealthGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
        for (String service : new String[] {"", "ratelimit"}) {
            assertThat(health.check(HealthCheckRequest.newBuilder()
                                    .setService(service)
                                    .build())
                            .getStatus())
                    .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
        }
        try (TestServer secured = TestServer.start(t -> t.withToken("s3cret"), "envoy/example5.yaml")) {
            ManagedChannel ch = NettyChannelBuilder.forAddress(
                            "127.0.0.1", secured.server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
            try {
                assertThat(HealthGrpc.newBlockingStub(ch)
                                .withDeadlineAfter(30, TimeUnit.SECONDS)
                                .check(HealthCheckRequest.newBuilder()
                                        .setService("ratelimit")
                                        .build())
                                .getStatus())
                        .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aStoreThatIsDownIsUnavailable() throws InterruptedException {
        try (TestServer down = TestServer.startWith(
                new DownStore(),
                t -> t.withStore(t.limiter(), "down", java.time.Duration.ofSeconds(1)),
                "envoy/example5.yaml")) {
            ManagedChannel ch = NettyChannelBuilder.forAddress(
                            "127.0.0.1", down.server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
            try {
                var stub = RateLimitServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS);
                assertThatThrownBy(() -> stub.shouldRateLimit(request("internal", 1, descriptor("azure=x"))))
                        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                            assertThat(e.getStatus().getDescription())
                                    .contains("the down store failed: connection refused");
                        });
                assertThat(stub.shouldRateLimit(request("internal", 1, descriptor("ldap=x")))
                                .getOverallCode())
                        .as("unlimited rules need no store")
                        .isEqualTo(Code.OK);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void tokenIsRequiredInMetadataWhenConfigured() throws InterruptedException {
        try (TestServer secured = TestServer.start(t -> t.withToken("s3cret"), "envoy/example5.yaml")) {
            ManagedChannel ch = NettyChannelBuilder.forAddress(
                            "127.0.0.1", secured.server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
            try {
                var stub = RateLimitServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS);
                assertThatThrownBy(() -> stub.shouldRateLimit(request("internal", 1, descriptor("azure=x"))))
                        .isInstanceOfSatisfying(
                                StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED));
                Metadata md = new Metadata();
                md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer s3cret");
                RateLimitResponse ok = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                        .shouldRateLimit(request("internal", 1, descriptor("azure=x")));
                assertThat(ok.getOverallCode()).isEqualTo(Code.OK);
                // and over HTTP
                assertThat(secured.check("internal", "azure=x").status()).isEqualTo(401);
                assertThat(secured.post(TestServer.check("internal", -1, "azure=x"), "Authorization", "Bearer s3cret")
                                .status())
                        .isEqualTo(200);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }
}
