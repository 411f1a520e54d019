package dev.sluice.server.http;

import dev.sluice.Decision;
import dev.sluice.server.config.Messages;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.CheckResult;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.RateLimitHeaders;
import dev.sluice.server.decision.StoreUnavailableException;
import dev.sluice.server.decision.UnsupportedByStoreException;
import dev.sluice.server.envoy.RlsService;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP routes: {@code POST /v1/check}, {@code /v1/peek} (check only, for any cost), {@code /v1/reserve},
 * {@code /v1/reset}, {@code GET /healthz}, {@code GET /readyz}, {@code GET /metrics}, and envoyproxy/ratelimit's
 * own: {@code POST /json} (its {@code RateLimitRequest} as protobuf JSON in, the {@code RateLimitResponse} out, the
 * same answer as gRPC {@code ShouldRateLimit}: 200, 429 when over the limit) and {@code GET /healthcheck}
 * ({@code OK}; 500 while the store is unhealthy and once shutting down); and the dashboard: its page at
 * {@code GET /} and {@code /ui}, its data at {@code GET /v1/dashboard}.
 *
 * <p>Every refusal is an {@code application/problem+json} body naming what was wrong; an unexpected failure is
 * logged with its stack trace and answered with a bare 500 problem that contains none. While a decision is
 * pending (remote stores) the connection stops reading, so pipelined requests are answered in order. The bearer
 * token, when configured, is required on {@code /v1/*} and {@code /json}; the body bound holds on every route.
 */
@ChannelHandler.Sharable
final class HttpApiHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    static final String PROBLEM_JSON = "application/problem+json";
    private static final Logger log = LoggerFactory.getLogger(HttpApiHandler.class);
    private static final String JSON = "application/json";
    /** Headers whose names are this class's constants: checking each name on every answer cost ~5% of a check. */
    private static final HttpHeadersFactory CONSTANT_NAMES =
            DefaultHttpHeadersFactory.headersFactory().withNameValidation(false);
    /** The last answer this connection is waiting to write, if any (see {@link #inTurn}). */
    private static final AttributeKey<CompletableFuture<Void>> PENDING = AttributeKey.valueOf("sluice.pending");
    /** Requests that arrived (pipelined) while an answer was pending, in order. */
    private static final AttributeKey<ArrayDeque<FullHttpRequest>> QUEUED = AttributeKey.valueOf("sluice.queued");

    private final DecisionService service;
    /** envoy's {@code POST /json}: the same answers as gRPC {@code ShouldRateLimit}. */
    private final RlsService rls;

    /** Null: no token is asked for. */
    private final byte @Nullable [] token;

    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean draining;

    HttpApiHandler(DecisionService service, RlsService rls, @Nullable String bearerToken) {
        this.service = service;
        this.rls = rls;
        this.token = bearerToken == null ? null : ("Bearer " + bearerToken).getBytes(StandardCharsets.UTF_8);
    }

    int inFlight() {
        return inFlight.get();
    }

    void draining(boolean d) {
        draining = d;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (busy(ctx)) {
            // pipelined behind an answer still being decided: wait for it (answers go out in request order)
            queue(ctx).add(req.retain());
            return;
        }
        route(ctx, req);
    }

    private void route(ChannelHandlerContext ctx, FullHttpRequest req) {
        boolean keepAlive = HttpUtil.isKeepAlive(req) && !draining;
        if (!req.decoderResult().isSuccess()) {
            service.metrics().rejected("malformed-http");
            problem(
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
            case "/v1/check" -> {
                if (!req.method().equals(HttpMethod.POST)) {
                    methodNotAllowed(ctx, keepAlive, "POST");
                } else if (authorized(ctx, req, keepAlive)) {
                    check(ctx, req, keepAlive, path);
                }
            }
            case "/v1/peek", "/v1/reserve", "/v1/reset" -> {
                if (!req.method().equals(HttpMethod.POST)) {
                    methodNotAllowed(ctx, keepAlive, "POST");
                } else if (authorized(ctx, req, keepAlive)) {
                    check(ctx, req, keepAlive, path);
                }
            }
            case "/json" -> {
                if (!req.method().equals(HttpMethod.POST)) {
                    methodNotAllowed(ctx, keepAlive, "POST");
                } else if (authorized(ctx, req, keepAlive)) {
                    envoyJson(ctx, req, keepAlive);
                }
            }
            case "/healthcheck" -> {
                if (req.method().equals(HttpMethod.GET)) {
                    healthcheck(ctx, keepAlive);
                } else {
                    methodNotAllowed(ctx, keepAlive, "GET");
                }
            }
            case "/healthz" -> {
                if (req.method().equals(HttpMethod.GET)) {
                    respond(
                            ctx,
                            keepAlive,
                            HttpResponseStatus.OK,
                            JSON,
                            "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8),
                            Map.of());
                } else {
                    methodNotAllowed(ctx, keepAlive, "GET");
                }
            }
            case "/readyz" -> {
                if (req.method().equals(HttpMethod.GET)) {
                    ready(ctx, keepAlive);
                } else {
                    methodNotAllowed(ctx, keepAlive, "GET");
                }
            }
            case "/metrics" -> {
                if (req.method().equals(HttpMethod.GET)) {
                    respond(
                            ctx,
                            keepAlive,
                            HttpResponseStatus.OK,
                            "text/plain; version=0.0.4; charset=utf-8",
                            service.metrics().scrape().getBytes(StandardCharsets.UTF_8),
                            Map.of());
                } else {
                    methodNotAllowed(ctx, keepAlive, "GET");
                }
            }
            case "/", "/ui", "/ui/dashboard.js", "/ui/dashboard.css", "/v1/dashboard" ->
                dashboard(ctx, req, keepAlive, path);
            default ->
                problem(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.NOT_FOUND,
                        "not-found",
                        "no route " + Messages.shorten(path)
                                + ": use POST /v1/check, /v1/peek, /v1/reserve, /v1/reset, /json, GET /healthz, GET /readyz, "
                                + "GET /healthcheck, GET /metrics, or GET / for the dashboard",
                        Map.of());
        }
    }

    /**
     * The dashboard: its page and files ({@link DashboardAssets}, no token: they hold no data) and its data,
     * {@code GET /v1/dashboard} ({@link DashboardJson}), which needs the token like the rest of {@code /v1}.
     */
    private void dashboard(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive, String path) {
        if (!req.method().equals(HttpMethod.GET)) {
            methodNotAllowed(ctx, keepAlive, "GET");
        } else if (!path.equals("/v1/dashboard")) {
            DashboardAssets.Asset a =
                    Objects.requireNonNull(DashboardAssets.at(path), "routed here for the dashboard's paths alone");
            respond(ctx, keepAlive, HttpResponseStatus.OK, a.contentType(), a.body(), a.headers());
        } else if (authorized(ctx, req, keepAlive)) {
            respond(
                    ctx,
                    keepAlive,
                    HttpResponseStatus.OK,
                    JSON,
                    DashboardJson.write(service),
                    DashboardAssets.DATA_HEADERS);
        }
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
        problem(
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

    private void check(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive, String path) {
        long start = System.nanoTime();
        CompletableFuture<CheckResult> f;
        try {
            String ct = req.headers().get(HttpHeaderNames.CONTENT_TYPE);
            if (ct != null && !ct.toLowerCase(Locale.ROOT).startsWith("application/json")) {
                throw new UnsupportedMediaType(ct);
            }
            byte[] body = ByteBufUtil.getBytes(req.content());
            switch (path) {
                case "/v1/check" -> f = service.check(CheckJson.parse(body, service.maxDescriptors()));
                case "/v1/peek" -> f = service.peek(CheckJson.parse(body, service.maxDescriptors()));
                case "/v1/reserve" -> {
                    CheckJson.Reserve r = CheckJson.parseReserve(body, service.maxDescriptors());
                    f = service.reserve(r.request(), r.maxWaitNanos());
                }
                default ->
                    f = service.reset(CheckJson.parse(body, service.maxDescriptors()))
                            .thenApply(v -> null);
            }
        } catch (BadRequestException e) {
            service.metrics().rejected(e.type());
            problem(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST, e.type(), e.getMessage(), Map.of());
            return;
        } catch (UnsupportedMediaType e) {
            service.metrics().rejected("unsupported-media-type");
            problem(
                    ctx,
                    keepAlive,
                    HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                    "unsupported-media-type",
                    "Content-Type " + Messages.shorten(e.contentType) + " is not JSON: send application/json",
                    Map.of());
            return;
        }
        inTurn(ctx, f, () -> finish(ctx, keepAlive, f, start));
    }

    /**
     * envoy's {@code POST /json}: the body is a {@code RateLimitRequest} in protobuf JSON, decided by the same
     * {@link RlsService#decide} as gRPC. No Content-Type is required (envoy reads any: its README's
     * {@code curl --data} sends a form type). 200 OK, 429 OVER_LIMIT, 500 UNKNOWN as envoy; what envoy answers with
     * a bare 400 (a body that is no {@code RateLimitRequest}, {@code INVALID_ARGUMENT}) is a 400 problem naming what
     * was wrong; a store that cannot answer is 503 with {@code Retry-After}, as on {@code /v1/check}.
     */
    private void envoyJson(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive) {
        long start = System.nanoTime();
        RateLimitRequest request;
        try {
            request = EnvoyJson.parse(new ByteBufInputStream(req.content()));
        } catch (BadRequestException e) {
            service.metrics().rejected(e.type());
            problem(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST, e.type(), e.getMessage(), Map.of());
            return;
        }
        CompletableFuture<RateLimitResponse> f = rls.decide(request);
        inTurn(ctx, f, () -> finishEnvoyJson(ctx, keepAlive, f, start));
    }

    private void finishEnvoyJson(
            ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<RateLimitResponse> f, long start) {
        RateLimitResponse r;
        try {
            r = f.join();
        } catch (CompletionException e) {
            // decide() has counted and logged it already; only the answer is left
            Throwable t = e.getCause();
            if (!(t instanceof StatusRuntimeException sre)) {
                internalError(ctx, t);
                return;
            }
            Status st = sre.getStatus();
            String description = st.getDescription() == null ? st.getCode().name() : st.getDescription();
            switch (st.getCode()) {
                case INVALID_ARGUMENT ->
                    problem(
                            ctx,
                            keepAlive,
                            HttpResponseStatus.BAD_REQUEST,
                            problemType(description, "invalid-request"),
                            problemDetail(description),
                            Map.of());
                case UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED ->
                    problem(
                            ctx,
                            keepAlive,
                            HttpResponseStatus.SERVICE_UNAVAILABLE,
                            problemType(description, "store-unavailable"),
                            problemDetail(description),
                            Map.of("Retry-After", "1"));
                case UNIMPLEMENTED ->
                    problem(
                            ctx,
                            keepAlive,
                            HttpResponseStatus.NOT_IMPLEMENTED,
                            problemType(description, "unsupported"),
                            problemDetail(description),
                            Map.of());
                default ->
                    problem(
                            ctx,
                            false,
                            HttpResponseStatus.INTERNAL_SERVER_ERROR,
                            "internal-error",
                            "the service failed to answer; the cause is in its log",
                            Map.of());
            }
            return;
        }
        byte[] body;
        try {
            body = EnvoyJson.print(r);
        } catch (IOException | RuntimeException e) {
            internalError(ctx, e);
            return;
        }
        HttpResponseStatus status = switch (r.getOverallCode()) {
            case OVER_LIMIT -> HttpResponseStatus.TOO_MANY_REQUESTS;
            case OK -> HttpResponseStatus.OK;
            default -> HttpResponseStatus.INTERNAL_SERVER_ERROR; // UNKNOWN, as envoy
        };
        service.metrics().timer(false).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        respond(ctx, keepAlive, status, JSON, body, Map.of());
    }

    /** {@code INVALID_ARGUMENT: unknown-domain: …} → {@code unknown-domain}, as {@link RlsService} words them. */
    private static String problemType(String description, String fallback) {
        int colon = description.indexOf(": ");
        String t = colon < 0 ? "" : description.substring(0, colon);
        return !t.isEmpty() && t.chars().allMatch(c -> (c >= 'a' && c <= 'z') || c == '-') ? t : fallback;
    }

    private static String problemDetail(String description) {
        int colon = description.indexOf(": ");
        return colon >= 0 && !problemType(description, "").isEmpty() ? description.substring(colon + 2) : description;
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
    private void healthcheck(ChannelHandlerContext ctx, boolean keepAlive) {
        if (draining || !service.storeReport().healthy()) {
            respond(
                    ctx,
                    keepAlive,
                    HttpResponseStatus.INTERNAL_SERVER_ERROR,
                    "text/plain; charset=utf-8",
                    new byte[0],
                    Map.of());
        } else {
            respond(
                    ctx,
                    keepAlive,
                    HttpResponseStatus.OK,
                    "text/plain; charset=utf-8",
                    "OK".getBytes(StandardCharsets.UTF_8),
                    Map.of());
        }
    }

    private static boolean busy(ChannelHandlerContext ctx) {
        CompletableFuture<Void> p = ctx.channel().attr(PENDING).get();
        return p != null && !p.isDone();
    }

    private static ArrayDeque<FullHttpRequest> queue(ChannelHandlerContext ctx) {
        ArrayDeque<FullHttpRequest> q = ctx.channel().attr(QUEUED).get();
        if (q == null) {
            q = new ArrayDeque<>();
            ctx.channel().attr(QUEUED).set(q);
        }
        return q;
    }

    /**
     * Answers when {@code f} is done <em>and</em> every earlier answer on this connection has been written:
     * pipelined requests (several sent before the first answer) may be decided out of order by a remote store,
     * but HTTP/1.1 answers them in order. A decision that is already done with nothing pending is answered at
     * once, on the event loop (the in-memory path). While anything is pending the connection stops reading.
     */
    private void inTurn(ChannelHandlerContext ctx, CompletableFuture<?> f, Runnable answer) {
        CompletableFuture<Void> previous = ctx.channel().attr(PENDING).get();
        if (f.isDone() && (previous == null || previous.isDone())) {
            answer.run();
            return;
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        ctx.channel().attr(PENDING).set(mine);
        inFlight.incrementAndGet();
        ctx.channel().config().setAutoRead(false);
        CompletableFuture<?> gate = previous == null ? f : CompletableFuture.allOf(previous, f);
        CompletableFuture<?> unused = gate.whenComplete((r, t) -> ctx.executor().execute(() -> {
            try {
                answer.run();
            } finally {
                inFlight.decrementAndGet();
                mine.complete(null);
                ArrayDeque<FullHttpRequest> q = ctx.channel().attr(QUEUED).get();
                while (q != null && !q.isEmpty() && !busy(ctx)) {
                    FullHttpRequest next = q.poll();
                    try {
                        route(ctx, next);
                    } finally {
                        next.release();
                    }
                }
                if (!busy(ctx)) {
                    ctx.channel().config().setAutoRead(true);
                }
            }
        }));
    }

    private void finish(ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<CheckResult> f, long start) {
        CheckResult r;
        try {
            r = f.join();
        } catch (CompletionException e) {
            Throwable t = e.getCause();
            if (t instanceof BadRequestException b) {
                service.metrics().rejected(b.type());
                problem(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST, b.type(), b.getMessage(), Map.of());
            } else if (t instanceof StoreUnavailableException s) {
                if (service.logThrottle().allow(s.type())) {
                    log.atWarn()
                            .addKeyValue("event", "store_unavailable")
                            .addKeyValue("protocol", "http")
                            .addKeyValue("type", s.type())
                            .addKeyValue("detail", s.getMessage())
                            .addKeyValue(
                                    "suppressed_since_last",
                                    service.logThrottle().suppressedSinceLast())
                            .log();
                }
                problem(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.SERVICE_UNAVAILABLE,
                        s.type(),
                        s.getMessage(),
                        Map.of("Retry-After", "1"));
            } else if (t instanceof UnsupportedByStoreException u) {
                service.metrics().rejected(u.type());
                problem(ctx, keepAlive, HttpResponseStatus.NOT_IMPLEMENTED, u.type(), u.getMessage(), Map.of());
            } else {
                internalError(ctx, t);
            }
            return;
        }
        if (r == null) { // reset
            FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT);
            send(ctx, keepAlive, resp);
            return;
        }
        ByteBuf buf = ctx.alloc().buffer(512);
        try {
            CheckJson.write(r, buf);
        } catch (RuntimeException e) {
            buf.release();
            internalError(ctx, e);
            return;
        }
        FullHttpResponse resp = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1,
                r.allowed() ? HttpResponseStatus.OK : HttpResponseStatus.TOO_MANY_REQUESTS,
                buf,
                CONSTANT_NAMES,
                CONSTANT_NAMES);
        resp.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, buf.readableBytes());
        RateLimitHeaders.of(r).forEach((k, v) -> resp.headers().set(k, v));
        Timer timer = service.metrics().timer(false);
        timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        send(ctx, keepAlive, resp);
    }

    /**
     * {@code /readyz}: one probe of the store that writes nothing ({@link DecisionService#probe()}: a peek under the
     * store's budget), then 200 whenever the service can answer decisions, which with a failure policy includes a
     * store that is down or not opened yet (the policy answers); the body ({@link HealthJson}) says which, with the
     * store's health, the cause and the policy. Failing readiness because the shared store is down would take every
     * instance out of its load balancer at once, which turns the policy the operator chose (fail closed, local
     * limits) into whatever the callers do without the service; alert on {@code store_healthy} or
     * {@code sluice_store_healthy} instead. 503 only when not even the policy could answer (the store pool is full or
     * past its deadline, or a store without a policy failed). Liveness ({@code /healthz}) never looks at the store.
     */
    private void ready(ChannelHandlerContext ctx, boolean keepAlive) {
        CompletableFuture<Decision> probe = service.probe();
        inTurn(ctx, probe, () -> {
            Throwable t =
                    probe.isCompletedExceptionally() ? probe.handle((v, e) -> e).join() : null;
            if (t == null) {
                Decision d = probe.join();
                respond(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.OK,
                        JSON,
                        HealthJson.ready(d, service.storeReport()),
                        d.degraded()
                                ? Map.of(
                                        RateLimitHeaders.DEGRADED,
                                        d.degradation().label())
                                : Map.of());
            } else {
                Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                service.metrics().storeError("readyz");
                problem(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.SERVICE_UNAVAILABLE,
                        "store-unavailable",
                        "the " + service.storeName() + " store does not answer: " + c.getMessage(),
                        Map.of("Retry-After", "1"));
            }
        });
    }

    private void internalError(ChannelHandlerContext ctx, @Nullable Throwable t) {
        log.atError()
                .addKeyValue("event", "internal_error")
                .addKeyValue("protocol", "http")
                .setCause(t)
                .log();
        problem(
                ctx,
                false,
                HttpResponseStatus.INTERNAL_SERVER_ERROR,
                "internal-error",
                "the service failed to answer; the cause is in its log",
                Map.of());
    }

    private void methodNotAllowed(ChannelHandlerContext ctx, boolean keepAlive, String allow) {
        problem(
                ctx,
                keepAlive,
                HttpResponseStatus.METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "this route answers " + allow,
                Map.of("Allow", allow));
    }

    private void problem(
            ChannelHandlerContext ctx,
            boolean keepAlive,
            HttpResponseStatus status,
            String type,
            @Nullable String detail,
            Map<String, String> headers) {
        respond(ctx, keepAlive, status, PROBLEM_JSON, CheckJson.problem(status.code(), type, detail), headers);
    }

    private void respond(
            ChannelHandlerContext ctx,
            boolean keepAlive,
            HttpResponseStatus status,
            String type,
            byte[] body,
            Map<String, String> headers) {
        FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        resp.headers().set(HttpHeaderNames.CONTENT_TYPE, type).setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        headers.forEach((k, v) -> resp.headers().set(k, v));
        send(ctx, keepAlive, resp);
    }

    private void send(ChannelHandlerContext ctx, boolean keepAlive, FullHttpResponse resp) {
        if (keepAlive && !draining) {
            ChannelFuture unused = ctx.writeAndFlush(resp, ctx.voidPromise());
        } else {
            resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        ArrayDeque<FullHttpRequest> q = ctx.channel().attr(QUEUED).get();
        if (q != null) {
            q.forEach(FullHttpRequest::release);
            q.clear();
        }
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

    private static final class UnsupportedMediaType extends Exception {
        private static final long serialVersionUID = 1L;
        /** The Content-Type sent. */
        final String contentType;

        UnsupportedMediaType(String ct) {
            super(ct, null, false, false);
            this.contentType = ct;
        }
    }
}
