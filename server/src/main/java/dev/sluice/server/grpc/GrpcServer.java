package dev.sluice.server.grpc;

import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.TurnBurst;
import dev.sluice.server.envoy.RlsService;
import io.grpc.BindableService;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.util.concurrent.EventExecutor;
import io.grpc.netty.shaded.io.netty.util.internal.ThreadExecutorMap;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The gRPC endpoint: {@link RlsService} on grpc-java's Netty transport. Calls run on the transport's event loop
 * (decisions never block it: remote stores are asked asynchronously), messages are bounded by
 * the same body limit as HTTP, and an optional bearer token is required in the {@code authorization} metadata.
 * {@code grpc.health.v1.Health} answers as envoyproxy/ratelimit's: {@code "ratelimit"} is SERVING while the store is
 * healthy ({@link #serving(boolean)}, the same verdict as HTTP's {@code /healthcheck}) and NOT_SERVING otherwise,
 * {@code ""} (the server) is SERVING; both are NOT_SERVING once shutdown begins. It needs no token, like HTTP's
 * {@code /healthz}.
 * Server reflection (both {@code grpc.reflection.v1} and the older {@code v1alpha} that many clients still ask
 * first) is on unless switched off, so that {@code grpcurl} and reflection-driven clients can call the service without
 * envoy's {@code .proto} files; it tells only what the protocols are (the public RLS and health schemas), so it needs
 * no token either.
 */
public final class GrpcServer implements AutoCloseable {
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    /** The service name envoyproxy/ratelimit reports its health under (besides "", the whole server). */
    static final String HEALTH_SERVICE = "ratelimit";

    private final Server server;
    private final HealthStatusManager health;

    private GrpcServer(Server server, HealthStatusManager health) {
        this.server = server;
        this.health = health;
    }

    public static GrpcServer start(
            InetSocketAddress address,
            DecisionService service,
            RlsService rls,
            int maxMessageBytes,
            @Nullable String bearerToken,
            Duration idleTimeout,
            boolean reflection)
            throws IOException {
        var definition = rls.bindService();
        if (TurnBurst.worthIt(service)) {
            definition = ServerInterceptors.intercept(definition, new OneBurstPerTurn());
        }
        if (bearerToken != null) {
            definition = ServerInterceptors.intercept(definition, new TokenCheck(bearerToken, service));
        }
        // Calls run on the transport's event loop (directExecutor): nothing on the way to a decision blocks (the
        // in-memory store decides in place; remote stores are asked asynchronously and answer from their I/O
        // threads), so a hand-off to another pool only added a queue, a wake-up and a cache miss per call. Measured
        // with h2load (64 in flight on 1 connection, bench/server/README.md): about 1.5-2x the calls per second of
        // the ForkJoinPool this replaced. (An earlier measurement found directExecutor ten times slower: calls then
        // waited on the store in place.)
        // grpc.health.v1.Health as envoy's service answers it: "ratelimit" follows the store's health (envoy's Redis
        // component), "" is SERVING; both NOT_SERVING once shutdown begins
        HealthStatusManager health = new HealthStatusManager();
        health.setStatus(HEALTH_SERVICE, status(service.storeReport().healthy()));
        NettyServerBuilder builder = NettyServerBuilder.forAddress(address)
                .directExecutor()
                .maxInboundMessageSize(maxMessageBytes)
                .maxInboundMetadataSize(8192)
                .maxConnectionIdle(idleTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .withChildOption(ChannelOption.TCP_NODELAY, true)
                .addService(definition)
                .addService(health.getHealthService());
        if (reflection) {
            builder.addService(ProtoReflectionServiceV1.newInstance());
            builder.addService(v1alphaReflection());
        }
        Server s = builder.build().start();
        return new GrpcServer(s, health);
    }

    /** Whether {@code "ratelimit"} is SERVING: the store's health changed (ignored once shutdown has begun). */
    public void serving(boolean storeHealthy) {
        health.setStatus(HEALTH_SERVICE, status(storeHealthy));
    }

    private static HealthCheckResponse.ServingStatus status(boolean storeHealthy) {
        return storeHealthy ? HealthCheckResponse.ServingStatus.SERVING : HealthCheckResponse.ServingStatus.NOT_SERVING;
    }

    /** grpc.reflection.v1alpha: deprecated by grpc-java for v1, but grpcurl before 1.8.8 and Python's client ask it. */
    @SuppressWarnings("deprecation")
    private static BindableService v1alphaReflection() {
        return ProtoReflectionService.newInstance();
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) server.getListenSockets().get(0);
    }

    /** Stops taking calls, lets running calls finish within {@code grace}, then cancels the rest. */
    public void stop(Duration grace) {
        health.enterTerminalState(); // health checks see NOT_SERVING while calls drain
        server.shutdown();
        try {
            if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                server.shutdownNow().awaitTermination(1, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(5));
    }

    /**
     * Opens a {@link TurnBurst} where a call starts, on the transport's event loop (calls run there): the decisions
     * of every call read in one turn (h2load or envoy: many streams on one connection) go to a remote store together.
     */
    private static final class OneBurstPerTurn implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            EventExecutor loop = ThreadExecutorMap.currentExecutor();
            if (loop != null) {
                TurnBurst.open(loop);
            }
            return next.startCall(call, headers);
        }
    }

    private static final class TokenCheck implements ServerInterceptor {
        private final byte[] expected;
        private final DecisionService service;

        TokenCheck(String token, DecisionService service) {
            this.expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
            this.service = service;
        }

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            String got = headers.get(AUTHORIZATION);
            if (got == null || !MessageDigest.isEqual(expected, got.getBytes(StandardCharsets.UTF_8))) {
                service.metrics().rejected("unauthorized");
                call.close(
                        Status.UNAUTHENTICATED.withDescription(
                                got == null
                                        ? "missing 'authorization: Bearer <token>' metadata: this service requires the token given with --token"
                                        : "the bearer token is wrong"),
                        new Metadata());
                return new ServerCall.Listener<>() {};
            }
            return next.startCall(call, headers);
        }
    }
}
