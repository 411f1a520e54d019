package dev.sluice.server.http;

import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.envoy.RlsService;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.netty.buffer.ByteBufInputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * envoyproxy/ratelimit's own HTTP routes: {@code POST /json} (its {@code RateLimitRequest} as protobuf JSON in, the
 * {@code RateLimitResponse} out, the same answer as gRPC {@code ShouldRateLimit}) and {@code GET /healthcheck}.
 */
final class EnvoyRoutes {
    private static final String TEXT = "text/plain; charset=utf-8";

    private final DecisionService service;
    /** The same answers as gRPC {@code ShouldRateLimit}. */
    private final RlsService rls;

    private final HttpAnswers answers;
    private final HttpFailures failures;
    private final InOrder inOrder;

    EnvoyRoutes(DecisionService service, RlsService rls, HttpAnswers answers, HttpFailures failures, InOrder inOrder) {
        this.service = service;
        this.rls = rls;
        this.answers = answers;
        this.failures = failures;
        this.inOrder = inOrder;
    }

    /**
     * envoy's {@code POST /json}: the body is a {@code RateLimitRequest} in protobuf JSON, decided by the same
     * {@link RlsService#decide} as gRPC. No Content-Type is required (envoy reads any: its README's
     * {@code curl --data} sends a form type). 200 OK, 429 OVER_LIMIT, 500 UNKNOWN as envoy; a failure is answered as
     * on {@code /v1/check} ({@link HttpFailures}): what envoy answers with a bare 400 (a body that is no
     * {@code RateLimitRequest}, {@code INVALID_ARGUMENT}) is a 400 problem naming what was wrong, a store that cannot
     * answer is 503 with {@code Retry-After}.
     */
    void json(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive) {
        long start = System.nanoTime();
        RateLimitRequest request;
        try {
            request = EnvoyJson.parse(new ByteBufInputStream(req.content()));
        } catch (BadRequestException e) {
            failures.answer(ctx, keepAlive, e);
            return;
        }
        CompletableFuture<RateLimitResponse> f = rls.decide(request);
        inOrder.inTurn(ctx, f, () -> finishJson(ctx, keepAlive, f, start));
    }

    private void finishJson(
            ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<RateLimitResponse> f, long start) {
        RateLimitResponse r;
        byte[] body;
        try {
            r = f.join();
            body = EnvoyJson.print(r);
        } catch (IOException | RuntimeException e) {
            // a failed decision (CompletionException) or an answer that could not be printed
            failures.answer(ctx, keepAlive, e);
            return;
        }
        HttpResponseStatus status = switch (r.getOverallCode()) {
            case OVER_LIMIT -> HttpResponseStatus.TOO_MANY_REQUESTS;
            case OK -> HttpResponseStatus.OK;
            default -> HttpResponseStatus.INTERNAL_SERVER_ERROR; // UNKNOWN, as envoy
        };
        service.metrics().timer(false).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        answers.respond(ctx, keepAlive, status, HttpAnswers.JSON, body, Map.of());
    }

    /**
     * envoy's {@code GET /healthcheck} (its health.go): {@code OK} as text while every component is healthy, else 500
     * with no body. envoy's components are its Redis (unhealthy until it first connects, and, with
     * {@code REDIS_HEALTH_CHECK_ACTIVE_CONNECTION}, while it has no connection), SIGTERM (failed so that load
     * balancers stop sending) and the config (always loaded here: {@code serve} refuses to start without valid rules
     * and a failed reload keeps the rules in force). Here: 500 while the store is unhealthy as its failure policy sees
     * it ({@link dev.sluice.server.decision.StoreReport#healthy()}: not opened yet, or its circuit is open) and once
     * shutting down. It reads the store's health, it does not call the store (the service's store watch keeps that
     * health current without traffic).
     */
    void healthcheck(ChannelHandlerContext ctx, boolean keepAlive) {
        if (answers.draining() || !service.storeReport().healthy()) {
            answers.respond(ctx, keepAlive, HttpResponseStatus.INTERNAL_SERVER_ERROR, TEXT, new byte[0], Map.of());
        } else {
            answers.respond(
                    ctx, keepAlive, HttpResponseStatus.OK, TEXT, "OK".getBytes(StandardCharsets.UTF_8), Map.of());
        }
    }
}
