package dev.sluice.server.http;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Netty's aggregator with a problem+json 413 for bodies over the bound. The answer is sent as soon as the
 * declared length (or the bytes received) exceed it, and the connection is closed: the rest of an oversized body
 * is never read into memory.
 *
 * <p>The close lingers ({@link #LINGER_SECONDS} at most): the server shuts its side down after the answer and
 * discards what the client still sends until the client closes. Closing at once, while the client is still
 * sending its body, made the kernel answer the unread bytes with a reset, and a client that had not read the 413
 * yet lost it ("received no bytes").
 */
final class BoundedAggregator extends HttpObjectAggregator {
    private final int maxBodyBytes;

    BoundedAggregator(int maxBodyBytes) {
        super(maxBodyBytes, true);
        this.maxBodyBytes = maxBodyBytes;
    }

    /** The longest an oversized request's connection stays open after its 413, discarding what arrives. */
    static final int LINGER_SECONDS = 2;

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        // from now on nothing the client sends is read into anything: not the rest of the body, not another request
        ctx.pipeline().addFirst(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext c, Object msg) {
                ReferenceCountUtil.release(msg);
            }
        });
        ctx.writeAndFlush(tooLarge()).addListener(f -> lingeringClose(ctx.channel()));
    }

    private static void lingeringClose(Channel ch) {
        if (!(ch instanceof DuplexChannel duplex) || !ch.isActive()) {
            ChannelFuture unused = ch.close();
            return;
        }
        // closing is fire and forget here, as everywhere in Netty: nothing waits for these futures
        ChannelFuture unused = duplex.shutdownOutput().addListener(f -> {
            ScheduledFuture<?> unusedClosing = ch.eventLoop()
                    .schedule(
                            () -> {
                                ChannelFuture unusedClosed = ch.close();
                            },
                            LINGER_SECONDS,
                            TimeUnit.SECONDS);
        });
    }

    /**
     * Netty answers an {@code Expect: 100-continue} request it will not take (declared length over the bound: 413;
     * any other expectation: 417) with an empty body of its own; here they are problems like every other refusal.
     * Netty still closes the connection after them (the body is never read).
     */
    @Override
    protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
        String expect = String.valueOf(start.headers().get(HttpHeaderNames.EXPECT)); // Netty removes it below
        Object r = super.newContinueResponse(start, maxContentLength, pipeline);
        if (!(r instanceof FullHttpResponse netty) || netty.status().code() < 400) {
            return r; // 100 Continue, or no interim answer at all
        }
        int code = netty.status().code();
        netty.release();
        if (code == HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE.code()) {
            return tooLarge();
        }
        if (expect.length() > 80) {
            expect = expect.substring(0, 80) + "…";
        }
        return problem(
                HttpResponseStatus.valueOf(code),
                "expectation-failed",
                "the header 'Expect: " + expect + "' is not supported: send 'Expect: 100-continue' or none");
    }

    private FullHttpResponse tooLarge() {
        return problem(
                HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                "body-too-large",
                "the request body exceeds " + maxBodyBytes
                        + " bytes (--max-body-bytes): send fewer or shorter descriptors");
    }

    private static FullHttpResponse problem(HttpResponseStatus status, String type, String detail) {
        return HttpAnswers.closingProblem(status, type, detail);
    }
}
