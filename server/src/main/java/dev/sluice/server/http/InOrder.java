package dev.sluice.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.util.AttributeKey;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * Answers in request order: pipelined requests (several sent before the first answer) may be decided out of order
 * by a remote store, but HTTP/1.1 answers them in order. While an answer is pending the connection stops reading,
 * and what it had already read waits here; {@link #inFlight()} counts the pending answers (the drain at shutdown
 * waits for them).
 */
final class InOrder {
    /** The last answer this connection is waiting to write, if any (see {@link #inTurn}). */
    private static final AttributeKey<CompletableFuture<Void>> PENDING = AttributeKey.valueOf("sluice.pending");
    /** Requests that arrived (pipelined) while an answer was pending, in order. */
    private static final AttributeKey<ArrayDeque<FullHttpRequest>> QUEUED = AttributeKey.valueOf("sluice.queued");

    private final AtomicInteger inFlight = new AtomicInteger();
    /** Routes a request that waited its turn. */
    private final BiConsumer<ChannelHandlerContext, FullHttpRequest> route;

    InOrder(BiConsumer<ChannelHandlerContext, FullHttpRequest> route) {
        this.route = route;
    }

    int inFlight() {
        return inFlight.get();
    }

    /** Routes {@code req} now, or after the answers pending on its connection (it is retained until then). */
    void read(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (busy(ctx)) {
            // pipelined behind an answer still being decided: wait for it (answers go out in request order)
            queue(ctx).add(req.retain());
            return;
        }
        route.accept(ctx, req);
    }

    /**
     * Answers when {@code f} is done <em>and</em> every earlier answer on this connection has been written. A
     * decision that is already done with nothing pending is answered at once, on the event loop (the in-memory
     * path). While anything is pending the connection stops reading.
     */
    void inTurn(ChannelHandlerContext ctx, CompletableFuture<?> f, Runnable answer) {
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
                        route.accept(ctx, next);
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

    /** The connection closed: what waited on it is dropped. */
    void closed(ChannelHandlerContext ctx) {
        ArrayDeque<FullHttpRequest> q = ctx.channel().attr(QUEUED).get();
        if (q != null) {
            q.forEach(FullHttpRequest::release);
            q.clear();
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
}
