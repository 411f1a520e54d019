package dev.sluice.server.http;

import dev.sluice.server.config.Messages;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.TurnBurst;
import dev.sluice.server.envoy.RlsService;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP routes, their methods and the bearer token: Sluice's decisions ({@code POST /v1/check}, {@code /v1/peek},
 * {@code /v1/reserve}, {@code /v1/reset}, {@code /v1/settle}, {@code /v1/in-flight/acquire}, {@code release},
 * {@code renew}: {@link CheckRoutes}), envoyproxy/ratelimit's own ({@code POST /json},
 * {@code GET /healthcheck}: {@link EnvoyRoutes}), and the operators' ({@code GET /healthz}, {@code GET /readyz},
 * {@code GET /metrics}, the dashboard at {@code GET /}, {@code /ui} and {@code GET /v1/dashboard}:
 * {@link OpsRoutes}).
 *
 * <p>Every refusal is an {@code application/problem+json} body naming what was wrong ({@link HttpAnswers}); a
 * failed decision is answered by its kind ({@link HttpFailures}): an unexpected failure is logged with its stack
 * trace and answered with a bare 500 problem that contains none. While a decision is pending (remote stores) the
 * connection stops reading, so pipelined requests are answered in order ({@link InOrder}). The bearer token, when
 * configured, is required on {@code /v1/*} and {@code /json}; the body bound holds on every route.
 */
@ChannelHandler.Sharable
final class HttpApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final Logger log = LoggerFactory.getLogger(HttpApiHandler.class);

    private final DecisionService service;
    /** Null: no token is asked for. */
    private final byte @Nullable [] token;

    /** Whether the decisions of one turn of the event loop go to the store together ({@link TurnBurst}). */
    private final boolean bursts;

    private final HttpAnswers answers = new HttpAnswers();
    private final InOrder inOrder = new InOrder(this::route);
    private final CheckRoutes checks;
    private final EnvoyRoutes envoy;
    private final OpsRoutes ops;

    HttpApiHandler(DecisionService service, RlsService rls, @Nullable String bearerToken) {
        this.service = service;
        this.bursts = TurnBurst.worthIt(service);
        this.token = bearerToken == null ? null : ("Bearer " + bearerToken).getBytes(StandardCharsets.UTF_8);
        HttpFailures failures = new HttpFailures(service, answers);
        this.checks = new CheckRoutes(service, answers, failures, inOrder);
        this.envoy = new EnvoyRoutes(service, rls, answers, failures, inOrder);
        this.ops = new OpsRoutes(service, answers, inOrder);
    }

    int inFlight() {
        return inOrder.inFlight();
    }

    void draining(boolean d) {
        answers.draining(d);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (bursts) {
            TurnBurst.open(ctx.executor()); // this turn's decisions go to a remote store together
        }
        inOrder.read(ctx, req);
    }

    private void route(ChannelHandlerContext ctx, FullHttpRequest req) {
        boolean keepAlive = HttpUtil.isKeepAlive(req) && !answers.draining();
        if (!req.decoderResult().isSuccess()) {
            service.metrics().rejected("malformed-http");
            answers.problem(
                    ctx,
                    false,
                    HttpResponseStatus.BAD_REQUEST,
                    "malformed-http",
                    "the HTTP request could not be parsed: "
                            + req.decoderResult().cause().getMessage(),
                    Map.of());
            return;
        }
        String uri = req.uri();
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        switch (path) {
            case "/v1/check",
                    "/v1/peek",
                    "/v1/reserve",
                    "/v1/reset",
                    "/v1/settle",
                    "/v1/in-flight/acquire",
                    "/v1/in-flight/release",
                    "/v1/in-flight/renew" -> {
                if (allowed(ctx, req, keepAlive, HttpMethod.POST) && authorized(ctx, req, keepAlive)) {
                    checks.check(ctx, req, keepAlive, path);
                }
            }
            case "/json" -> {
                if (allowed(ctx, req, keepAlive, HttpMethod.POST) && authorized(ctx, req, keepAlive)) {
                    envoy.json(ctx, req, keepAlive);
                }
            }
            case "/healthcheck" -> {
                if (allowed(ctx, req, keepAlive, HttpMethod.GET)) {
                    envoy.healthcheck(ctx, keepAlive);
                }
            }
            case "/healthz" -> {
                if (allowed(ctx, req, keepAlive, HttpMethod.GET)) {
                    ops.healthz(ctx, keepAlive);
                }
            }
            case "/readyz" -> {
                if (allowed(ctx, req, keepAlive, HttpMethod.GET)) {
                    ops.readyz(ctx, keepAlive);
                }
            }
            case "/metrics" -> {
                if (allowed(ctx, req, keepAlive, HttpMethod.GET)) {
                    ops.metrics(ctx, keepAlive);
                }
            }
            case "/", "/ui", "/ui/dashboard.js", "/ui/dashboard-tables.js", "/ui/dashboard.css", "/v1/dashboard" -> {
                // the page and its files need no token (they hold no data); the data does, like the rest of /v1
                if (allowed(ctx, req, keepAlive, HttpMethod.GET)
                        && (!path.equals("/v1/dashboard") || authorized(ctx, req, keepAlive))) {
                    ops.dashboard(ctx, keepAlive, path);
                }
            }
            default ->
                answers.problem(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.NOT_FOUND,
                        "not-found",
                        "no route " + Messages.shorten(path)
                                + ": use POST /v1/check, /v1/peek, /v1/reserve, /v1/reset, /v1/settle, "
                                + "/v1/in-flight/acquire, /v1/in-flight/release, /v1/in-flight/renew, /json, "
                                + "GET /healthz, GET /readyz, "
                                + "GET /healthcheck, GET /metrics, or GET / for the dashboard",
                        Map.of());
        }
    }

    /** Whether the request's method is the route's; else answers 405. */
    private boolean allowed(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive, HttpMethod method) {
        if (req.method().equals(method)) {
            return true;
        }
        answers.methodNotAllowed(ctx, keepAlive, method.name());
        return false;
    }

    private boolean authorized(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive) {
        if (token == null) {
            return true;
        }
        String got = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (got != null && MessageDigest.isEqual(token, got.getBytes(StandardCharsets.UTF_8))) {
            return true;
        }
        service.metrics().rejected("unauthorized");
        answers.problem(
                ctx,
                keepAlive,
                HttpResponseStatus.UNAUTHORIZED,
                "unauthorized",
                got == null
                        ? "missing 'Authorization: Bearer <token>': this service requires the token given with --token"
                        : "the bearer token is wrong",
                Map.of("WWW-Authenticate", "Bearer"));
        return false;
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        inOrder.closed(ctx);
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            ChannelFuture unused = ctx.close(); // the peer went away
            return;
        }
        log.atWarn()
                .addKeyValue("event", "connection_error")
                .addKeyValue("cause", cause)
                .log();
        ChannelFuture unused = ctx.close();
    }
}
