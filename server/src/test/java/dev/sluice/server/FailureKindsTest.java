package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.FailureKind;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.client.RemoteRateLimiter;
import dev.sluice.client.RemoteRateLimiterException;
import dev.sluice.http.HttpProblems;
import dev.sluice.server.envoy.GrpcFailures;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The failure vocabulary on every transport: for each {@link FailureKind} a real service over a store that fails
 * with it (a bare store, no failure policy in front, so the failure reaches the transports), asked over
 * {@code POST /v1/check}, envoy's {@code POST /json}, gRPC {@code ShouldRateLimit} and the remote client. The
 * expected answers are ARCHITECTURE.md's table, written out here, not read from the code's mapping.
 * {@link FailureKind#INTERNAL} comes from no store (what a store throws is the store's failure): its row is checked
 * on the mappings themselves.
 */
class FailureKindsTest {
    /** One row of the table: HTTP status and problem type, gRPC status, what the remote client throws. */
    record Row(int http, String type, Status.Code grpc, Class<? extends RuntimeException> client, Degradation cause) {}

    static final Map<FailureKind, Row> TABLE = new EnumMap<>(Map.of(
            FailureKind.BAD_REQUEST,
            new Row(400, "invalid-request", Status.Code.INVALID_ARGUMENT, IllegalArgumentException.class, null),
            FailureKind.UNSUPPORTED,
            new Row(501, "unsupported", Status.Code.UNIMPLEMENTED, UnsupportedOperationException.class, null),
            FailureKind.TIMED_OUT,
            new Row(
                    503,
                    "store-timeout",
                    Status.Code.UNAVAILABLE,
                    RemoteRateLimiterException.class,
                    Degradation.TIMEOUT),
            FailureKind.UNAVAILABLE,
            new Row(
                    503,
                    "store-unavailable",
                    Status.Code.UNAVAILABLE,
                    RemoteRateLimiterException.class,
                    Degradation.UNAVAILABLE),
            FailureKind.OVERLOADED,
            new Row(
                    503,
                    "store-overloaded",
                    Status.Code.UNAVAILABLE,
                    RemoteRateLimiterException.class,
                    Degradation.OVERLOADED),
            FailureKind.STORE_ERROR,
            new Row(
                    503,
                    "store-error",
                    Status.Code.UNAVAILABLE,
                    RemoteRateLimiterException.class,
                    Degradation.STORE_ERROR),
            FailureKind.MISCONFIGURED,
            new Row(
                    503,
                    "store-misconfigured",
                    Status.Code.UNAVAILABLE,
                    RemoteRateLimiterException.class,
                    Degradation.MISCONFIGURED),
            FailureKind.INTERNAL,
            new Row(
                    500,
                    "internal-error",
                    Status.Code.INTERNAL,
                    RemoteRateLimiterException.class,
                    Degradation.STORE_ERROR)));

    private static final Limit LIMIT = Limit.tokenBucket(3, Rate.perMinute(3));
    private static final String REQUEST = EnvoyJsonHttpTest.one("internal", "azure", "x");
    private static final Map<FailureKind, TestServer> SERVERS = new EnumMap<>(FailureKind.class);

    @BeforeAll
    static void start() {
        for (FailureKind k : FailureKind.values()) {
            if (k != FailureKind.INTERNAL) {
                SERVERS.put(k, TestServer.startWith(new FailingStore(thrown(k)), t -> t, "envoy/example5.yaml"));
            }
        }
    }

    @AfterAll
    static void stop() {
        SERVERS.values().forEach(TestServer::close);
    }

    /** What the store throws for {@code kind}: what the Java API throws for it. */
    static RuntimeException thrown(FailureKind kind) {
        return switch (kind) {
            case BAD_REQUEST -> new IllegalArgumentException("the store refuses this key: use another");
            case UNSUPPORTED -> new UnsupportedOperationException("this store does not decide: use another store");
            case INTERNAL -> throw new IllegalArgumentException("no store fails with INTERNAL");
            default -> new StoreException("the store failed as " + kind.label(), null, kind.degradation());
        };
    }

    @ParameterizedTest
    @EnumSource(value = FailureKind.class, names = "INTERNAL", mode = EnumSource.Mode.EXCLUDE)
    void overHttpV1Check(FailureKind kind) {
        Row row = TABLE.get(kind);
        TestServer.Resp r = SERVERS.get(kind).post(REQUEST);
        assertProblem(r, row, kind);
    }

    @ParameterizedTest
    @EnumSource(value = FailureKind.class, names = "INTERNAL", mode = EnumSource.Mode.EXCLUDE)
    void overEnvoysHttpJson(FailureKind kind) {
        Row row = TABLE.get(kind);
        TestServer s = SERVERS.get(kind);
        TestServer.Resp r = TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/json"))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(REQUEST))
                .build());
        assertProblem(r, row, kind);
    }

    @ParameterizedTest
    @EnumSource(value = FailureKind.class, names = "INTERNAL", mode = EnumSource.Mode.EXCLUDE)
    void overGrpc(FailureKind kind) throws InterruptedException {
        Row row = TABLE.get(kind);
        ManagedChannel channel = NettyChannelBuilder.forAddress(
                        "127.0.0.1", SERVERS.get(kind).server.grpcAddress().getPort())
                .usePlaintext()
                .build();
        try {
            Throwable t = catchThrowable(() -> RateLimitServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .shouldRateLimit(EnvoyJsonHttpTest.grpcRequest("internal", "azure", "x")));
            assertThat(t).isInstanceOf(StatusRuntimeException.class);
            Status st = ((StatusRuntimeException) t).getStatus();
            assertThat(st.getCode()).as("%s: %s", kind, st).isEqualTo(row.grpc());
            assertThat(st.getDescription()).startsWith(row.type() + ": ").contains(detail(kind));
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest
    @EnumSource(value = FailureKind.class, names = "INTERNAL", mode = EnumSource.Mode.EXCLUDE)
    void overTheRemoteClient(FailureKind kind) {
        Row row = TABLE.get(kind);
        RemoteRateLimiter remote = RemoteRateLimiter.builder(SERVERS.get(kind).base)
                .timeBudget(Duration.ofSeconds(10))
                .build();
        Throwable t = catchThrowable(() -> remote.tryAcquire("k", LIMIT, 1));
        assertThat(t).as("%s", kind).isExactlyInstanceOf(row.client()).hasMessageContaining(detail(kind));
        if (t instanceof RemoteRateLimiterException e) {
            assertThat(e.degradation()).isEqualTo(row.cause());
            assertThat(e.problemType()).isEqualTo(row.type());
            assertThat(e.httpStatus()).isEqualTo(row.http());
        }
    }

    /** INTERNAL: no store raises it, so its row is checked where each transport maps it. */
    @Test
    void anInternalFailureIsA500AndINTERNALAndAStoreErrorToTheClient() {
        Row row = TABLE.get(FailureKind.INTERNAL);
        assertThat(HttpProblems.status(FailureKind.INTERNAL)).isEqualTo(row.http());
        assertThat(HttpProblems.type(FailureKind.INTERNAL)).isEqualTo(row.type());
        assertThat(GrpcFailures.code(FailureKind.INTERNAL)).isEqualTo(row.grpc());
        assertThat(HttpProblems.kindOf(500, HttpProblems.TYPE_PREFIX + "internal-error"))
                .isEqualTo(FailureKind.INTERNAL);
        assertThat(FailureKind.INTERNAL.degradation()).isNull();
    }

    /** The table above is the code's, kind by kind, in both directions of HTTP. */
    @Test
    void theTableIsTheMappingsOwn() {
        for (FailureKind k : FailureKind.values()) {
            Row row = TABLE.get(k);
            assertThat(HttpProblems.status(k)).as("%s", k).isEqualTo(row.http());
            assertThat(HttpProblems.type(k)).as("%s", k).isEqualTo(row.type());
            assertThat(HttpProblems.kindOf(row.http(), HttpProblems.TYPE_PREFIX + row.type()))
                    .as("%s", k)
                    .isEqualTo(k);
            assertThat(GrpcFailures.code(k)).as("%s", k).isEqualTo(row.grpc());
        }
    }

    private static void assertProblem(TestServer.Resp r, Row row, FailureKind kind) {
        assertThat(r.status()).as("%s: %s", kind, r.body()).isEqualTo(row.http());
        assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(r.json().get("type").asText()).isEqualTo(HttpProblems.TYPE_PREFIX + row.type());
        assertThat(r.json().get("status").asInt()).isEqualTo(row.http());
        assertThat(r.json().get("detail").asText()).contains(detail(kind));
        assertThat(r.header("Retry-After")).isEqualTo(row.http() == 503 ? "1" : null);
    }

    /** What the answer's detail keeps of the store's message. */
    private static String detail(FailureKind kind) {
        return thrown(kind).getMessage();
    }

    /** A store whose every call fails with one exception. */
    static final class FailingStore implements RateLimiter {
        private final RuntimeException failure;

        FailingStore(RuntimeException failure) {
            this.failure = failure;
        }

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            throw failure;
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            throw failure;
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return CompletableFuture.failedFuture(failure);
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            throw failure;
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            throw failure;
        }

        @Override
        public void reset(String key, Limit limit) {
            throw failure;
        }

        @Override
        public void close() {}
    }
}
