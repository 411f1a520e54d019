package dev.sluice.server.http;

import dev.sluice.server.config.Messages;
import dev.sluice.server.decision.BadRequestException;
import dev.sluice.server.decision.CheckResult;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.RateLimitHeaders;
import dev.sluice.server.decision.Settlements;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Sluice's own decisions: {@code POST /v1/check} (with a {@code reservation}: a cost known afterwards, reserved on
 * its estimate), {@code /v1/settle} (that cost settled, {@link SettleJson}), {@code /v1/peek} (check only, for any
 * cost), {@code /v1/reserve}, {@code /v1/reset}, and work in flight ({@code /v1/in-flight/*}, {@link
 * InFlightRoutes}). The body is JSON ({@link CheckJson}), the answer too ({@link CheckAnswerJson}) with the
 * RateLimit headers, 200 or 429; a reset is 204; a failure is {@link HttpFailures}' problem.
 */
final class CheckRoutes {
    private final DecisionService service;
    private final HttpAnswers answers;
    private final HttpFailures failures;
    private final InOrder inOrder;
    private final InFlightRoutes inFlight;

    CheckRoutes(DecisionService service, HttpAnswers answers, HttpFailures failures, InOrder inOrder) {
        this.service = service;
        this.answers = answers;
        this.failures = failures;
        this.inOrder = inOrder;
        this.inFlight = new InFlightRoutes(service, answers, failures, inOrder);
    }

    void check(ChannelHandlerContext ctx, FullHttpRequest req, boolean keepAlive, String path) {
        long start = System.nanoTime();
        CompletableFuture<CheckResult> f;
        try {
            String ct = req.headers().get(HttpHeaderNames.CONTENT_TYPE);
            if (ct != null && !ct.toLowerCase(Locale.ROOT).startsWith("application/json")) {
                service.metrics().rejected("unsupported-media-type");
                answers.problem(
                        ctx,
                        keepAlive,
                        HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                        "unsupported-media-type",
                        "Content-Type " + Messages.shorten(ct) + " is not JSON: send application/json",
                        Map.of());
                return;
            }
            byte[] body = ByteBufUtil.getBytes(req.content());
            switch (path) {
                case "/v1/check" -> {
                    SettleJson.Check c = SettleJson.parseCheck(body, service.maxDescriptors());
                    f = c.id() == null
                            ? service.check(c.request())
                            : service.settlements().reserve(c.request(), c.id(), c.settleWithin());
                }
                case "/v1/settle" -> {
                    SettleJson.Settle st = SettleJson.parseSettle(body, service.maxDescriptors());
                    CompletableFuture<Settlements.Settled> settled =
                            service.settlements().settle(st.request(), st.id(), st.actual());
                    inOrder.inTurn(ctx, settled, () -> settled(ctx, keepAlive, settled));
                    return;
                }
                case "/v1/in-flight/acquire", "/v1/in-flight/release", "/v1/in-flight/renew" -> {
                    inFlight.route(ctx, keepAlive, path, body);
                    return;
                }
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
            failures.answer(ctx, keepAlive, e);
            return;
        }
        inOrder.inTurn(ctx, f, () -> finish(ctx, keepAlive, f, start));
    }

    /** {@code POST /v1/settle}'s answer: 200 with what the settle did, settled or not ({@link SettleJson}). */
    private void settled(ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<Settlements.Settled> f) {
        Settlements.Settled s;
        try {
            s = f.join();
        } catch (CompletionException e) {
            failures.answer(ctx, keepAlive, e);
            return;
        }
        ByteBuf buf = ctx.alloc().buffer(256);
        SettleJson.write(s, buf);
        FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, buf);
        resp.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, buf.readableBytes());
        answers.send(ctx, keepAlive, resp);
    }

    private void finish(ChannelHandlerContext ctx, boolean keepAlive, CompletableFuture<CheckResult> f, long start) {
        CheckResult r;
        try {
            r = f.join();
        } catch (CompletionException e) {
            failures.answer(ctx, keepAlive, e);
            return;
        }
        if (r == null) { // reset
            FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NO_CONTENT);
            answers.send(ctx, keepAlive, resp);
            return;
        }
        ByteBuf buf = ctx.alloc().buffer(512);
        try {
            CheckAnswerJson.write(r, buf);
        } catch (RuntimeException e) {
            buf.release();
            failures.answer(ctx, keepAlive, e);
            return;
        }
        FullHttpResponse resp = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1,
                r.allowed() ? HttpResponseStatus.OK : HttpResponseStatus.TOO_MANY_REQUESTS,
                buf,
                HttpAnswers.CONSTANT_NAMES.newHeaders(),
                EmptyHttpHeaders.INSTANCE); // an answer with a body of known length has no trailers
        HttpHeaders headers = resp.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, buf.readableBytes());
        RateLimitHeaders.write(r, headers::set);
        Timer timer = service.metrics().timer(false);
        timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
        answers.send(ctx, keepAlive, resp);
    }
}
