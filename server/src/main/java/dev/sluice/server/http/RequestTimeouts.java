package dev.sluice.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Slow-loris and idle-connection protection, one timer per connection:
 * <ul>
 *   <li>between requests (and before the first) the timer is the idle timeout: a connection that sends no
 *       complete request head within it is closed — this also bounds a client dribbling its headers;</li>
 *   <li>from a request's head to the end of its body the timer is the read timeout: a body that does not arrive
 *       in time gets 408 with a problem body, and the connection is closed;</li>
 *   <li>while the service decides there is no timer (the store has its own budget).</li>
 * </ul>
 */
final class RequestTimeouts extends ChannelDuplexHandler {
    private final long readTimeoutNanos;
    private final long idleTimeoutNanos;
    private ScheduledFuture<?> timer;

    RequestTimeouts(Duration readTimeout, Duration idleTimeout) {
        this.readTimeoutNanos = readTimeout.toNanos();
        this.idleTimeoutNanos = idleTimeout.toNanos();
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            idle(ctx);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        idle(ctx);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancel();
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof HttpRequest) {
            cancel();
            timer = ctx.executor().schedule(() -> timeout(ctx), readTimeoutNanos, TimeUnit.NANOSECONDS);
        }
        if (msg instanceof LastHttpContent) {
            cancel();
        }
        super.channelRead(ctx, msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof LastHttpContent) {
            promise = promise.unvoid();
            promise.addListener(f -> {
                if (ctx.channel().isActive()) {
                    idle(ctx);
                }
            });
        }
        super.write(ctx, msg, promise);
    }

    private void idle(ChannelHandlerContext ctx) {
        cancel();
        timer = ctx.executor().schedule(() -> {
            ctx.close();
        }, idleTimeoutNanos, TimeUnit.NANOSECONDS);
    }

    private void timeout(ChannelHandlerContext ctx) {
        timer = null;
        byte[] body = CheckJson.problem(408, "request-timeout", "the request body did not arrive within "
                + TimeUnit.NANOSECONDS.toMillis(readTimeoutNanos) + " ms (--read-timeout)");
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.REQUEST_TIMEOUT,
                Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpApiHandler.PROBLEM_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
