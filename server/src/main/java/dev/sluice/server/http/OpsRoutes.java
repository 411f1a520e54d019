package dev.sluice.server.http;

import dev.sluice.Decision;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.RateLimitHeaders;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * What operators and their tools read: {@code GET /healthz}, {@code GET /readyz}, {@code GET /metrics}, and the
 * dashboard (its page at {@code GET /} and {@code /ui}, its data at {@code GET /v1/dashboard}). The routing, the
 * method and the token are {@link HttpApiHandler}'s.
 */
final class OpsRoutes {
    private static final byte[] HEALTHY = "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8);

    private final DecisionService service;
    private final HttpAnswers answers;
    private final InOrder inOrder;

    OpsRoutes(DecisionService service, HttpAnswers answers, InOrder inOrder) {
        this.service = service;
        this.answers = answers;
        this.inOrder = inOrder;
    }

    /** Liveness: never looks at the store. */
    void healthz(ChannelHandlerContext ctx, boolean keepAlive) {
        answers.respond(ctx, keepAlive, HttpResponseStatus.OK, HttpAnswers.JSON, HEALTHY, Map.of());
    }

    void metrics(ChannelHandlerContext ctx, boolean keepAlive) {
        answers.respond(
                ctx,
                keepAlive,
                HttpResponseStatus.OK,
                "text/plain; version=0.0.4; charset=utf-8",
                service.metrics().scrape().getBytes(StandardCharsets.UTF_8),
                Map.of());
    }

    /**
     * The dashboard: its page and files ({@link DashboardAssets}: they hold no data) and its data,
     * {@code GET /v1/dashboard} ({@link DashboardJson}), which needs the token like the rest of {@code /v1}.
     */
    void dashboard(ChannelHandlerContext ctx, boolean keepAlive, String path) {
        if (path.equals("/v1/dashboard")) {
            answers.respond(
                    ctx,
                    keepAlive,
                    HttpResponseStatus.OK,
                    HttpAnswers.JSON,
                    DashboardJson.write(service),
                    DashboardAssets.DATA_HEADERS);
        } else {
            DashboardAssets.Asset a =
                    Objects.requireNonNull(DashboardAssets.at(path), "routed here for the dashboard's paths alone");
            answers.respond(ctx, keepAlive, HttpResponseStatus.OK, a.contentType(), a.body(), a.headers());
        }
    }

    /**
     * {@code /readyz}: one probe of the store that writes nothing ({@link DecisionService#probe()}: a peek under the
     * store's budget), then 200 whenever the service can answer decisions, which with a failure policy includes a
     * store that is down or not opened yet (the policy answers); the body ({@link HealthJson}) says which, with the
     * store's health, the cause and the policy. Failing readiness because the shared store is down would take every
     * instance out of its load balancer at once, which turns the policy the operator chose (fail closed, local
     * limits) into whatever the callers do without the service; alert on {@code store_healthy} or
     * {@code sluice_store_healthy} instead. 503 only when not even the policy could answer (the service's deadline
     * passed, or a store without a policy failed). Liveness ({@code /healthz}) never looks at the store.
     */
    void readyz(ChannelHandlerContext ctx, boolean keepAlive) {
        CompletableFuture<Decision> probe = service.probe();
        inOrder.inTurn(ctx, probe, () -> {
            Throwable t =
                    probe.isCompletedExceptionally() ? probe.handle((v, e) -> e).join() : null;
            if (t == null) {
                Decision d = probe.join();
                answers.respond(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.OK,
                        HttpAnswers.JSON,
                        HealthJson.ready(d, service.storeReport()),
                        d.degraded()
                                ? Map.of(
                                        RateLimitHeaders.DEGRADED,
                                        d.degradation().label())
                                : Map.of());
            } else {
                Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                service.metrics().storeError("readyz");
                answers.problem(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "store-unavailable",
                        "the " + service.storeName() + " store does not answer: " + c.getMessage(),
                        Map.of("Retry-After", "1"));
            }
        });
    }
}
