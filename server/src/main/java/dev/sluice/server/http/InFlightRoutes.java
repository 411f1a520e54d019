package dev.sluice.server.http;

import dev.sluice.Decision;
import dev.sluice.http.RateLimitFields;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.InFlight;
import dev.sluice.server.decision.RateLimitHeaders;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Work in flight ({@link InFlight}, {@link InFlightJson}): {@code POST /v1/in-flight/acquire} answers 200 or 429
 * with the decision ({@code Retry-After} when denied, {@code Sluice-Degraded} when a failure policy answered),
 * {@code /release} and {@code /renew} 200 with {@code held}; a failure is {@link HttpFailures}' problem. The body's
 * Content-Type was checked by {@link CheckRoutes}.
 */
final class InFlightRoutes {
    /** The routes' common prefix: the operation follows it. */
    static final String PREFIX = "/v1/in-flight/";

    private final DecisionService service;
    private final HttpAnswers answers;
    private final HttpFailures failures;
    private final InOrder inOrder;

    InFlightRoutes(DecisionService service, HttpAnswers answers, HttpFailures failures, InOrder inOrder) {
        this.service = service;
        this.answers = answers;
        this.failures = failures;
        this.inOrder = inOrder;
    }

    /** {@code path} is one of the three routes; a bad body is a {@link dev.sluice.server.decision.BadRequestException}. */
    void route(ChannelHandlerContext ctx, boolean keepAlive, String path, byte[] body) {
        String op = path.substring(PREFIX.length());
        InFlightJson.Request r = InFlightJson.parse(op, body);
        InFlight slots = service.inFlight();
        if (op.equals("acquire")) {
            CompletableFuture<Decision> f =
                    slots.acquire(r.domain(), r.key(), r.maxInFlight(), r.holder(), r.leaseNanos());
            inOrder.inTurn(ctx, f, () -> decided(ctx, keepAlive, f));
            return;
        }
        CompletableFuture<Boolean> f = op.equals("release")
                ? slots.release(r.domain(), r.key(), r.holder())
                : slots.renew(r.domain(), r.key(), r.holder(), r.leaseNanos());
        inOrder.inTurn(ctx, f, () -> held(ctx, keepAlive, f));
    }

    private void decided(ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<Decision> f) {
        Decision d;
        try {
            d = f.join();
        } catch (CompletionException e) {
            failures.answer(ctx, keepAlive, e);
            return;
        }
        ByteBuf buf = ctx.alloc().buffer(192);
        InFlightJson.write(d, buf);
        FullHttpResponse resp = json(d.allowed() ? HttpResponseStatus.OK : HttpResponseStatus.TOO_MANY_REQUESTS, buf);
        HttpHeaders h = resp.headers();
        if (!d.allowed()) {
            h.set(RateLimitFields.RETRY_AFTER, Long.toString(RateLimitFields.retryAfterSeconds(d)));
        }
        if (d.degraded()) {
            h.set(RateLimitHeaders.DEGRADED, d.degradation().label());
        }
        answers.send(ctx, keepAlive, resp);
    }

    private void held(ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<Boolean> f) {
        boolean held;
        try {
            held = f.join();
        } catch (CompletionException e) {
            failures.answer(ctx, keepAlive, e);
            return;
        }
        ByteBuf buf = ctx.alloc().buffer(16);
        InFlightJson.write(held, buf);
        answers.send(ctx, keepAlive, json(HttpResponseStatus.OK, buf));
    }

    private static FullHttpResponse json(HttpResponseStatus status, ByteBuf buf) {
        FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, buf);
        resp.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, buf.readableBytes());
        return resp;
    }
}
