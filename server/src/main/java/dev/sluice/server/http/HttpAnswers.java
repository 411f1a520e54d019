package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.sluice.http.HttpProblems;
import dev.sluice.server.config.Messages;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How every route writes its answer: a body of a content type, an RFC 9457 problem, and whether the connection
 * stays open (not once the server is draining: the answer then says {@code Connection: close} and closes it).
 */
final class HttpAnswers {
    static final String PROBLEM_JSON = "application/problem+json";
    static final String JSON = "application/json";
    /** Headers whose names are this class's constants: checking each name on every answer cost ~5% of a check. */
    static final HttpHeadersFactory CONSTANT_NAMES =
            DefaultHttpHeadersFactory.headersFactory().withNameValidation(false);

    private volatile boolean draining;

    boolean draining() {
        return draining;
    }

    void draining(boolean d) {
        draining = d;
    }

    void methodNotAllowed(ChannelHandlerContext ctx, boolean keepAlive, String allow) {
        problem(
                ctx,
                keepAlive,
                HttpResponseStatus.METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "this route answers " + allow,
                Map.of("Allow", allow));
    }

    void problem(
            ChannelHandlerContext ctx,
            boolean keepAlive,
            HttpResponseStatus status,
            String type,
            @Nullable String detail,
            Map<String, String> headers) {
        respond(ctx, keepAlive, status, PROBLEM_JSON, problemBody(status.code(), type, detail), headers);
    }

    void respond(
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

    void send(ChannelHandlerContext ctx, boolean keepAlive, FullHttpResponse resp) {
        if (keepAlive && !draining) {
            ChannelFuture unused = ctx.writeAndFlush(resp, ctx.voidPromise());
        } else {
            resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** An RFC 9457 problem body: {@code type} is the slug after {@link HttpProblems#TYPE_PREFIX}. */
    static byte[] problemBody(int status, String type, @Nullable String detail) {
        try {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("type", HttpProblems.TYPE_PREFIX + type);
            m.put("title", title(type));
            m.put("status", status);
            m.put("detail", detail == null ? title(type) : Messages.abbreviateQuoted(detail));
            return CheckJson.MAPPER.writeValueAsBytes(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String title(String type) {
        String t = type.replace('-', ' ');
        return Character.toUpperCase(t.charAt(0)) + t.substring(1);
    }

    /** An answer for a pipeline stage before the routes ({@link BoundedAggregator}, {@link RequestTimeouts}). */
    static FullHttpResponse closingProblem(HttpResponseStatus status, String type, String detail) {
        byte[] body = problemBody(status.code(), type, detail);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        r.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, PROBLEM_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return r;
    }
}
