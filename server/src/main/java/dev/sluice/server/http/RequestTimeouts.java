package dev.sluice.server.http;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Slow-loris and idle-connection protection, one timer per connection:
 * <ul>
 *   <li>between requests (and before the first) the deadline is the idle timeout: a connection that sends no
 *       complete request head within it is closed — this also bounds a client dribbling its headers;</li>
 *   <li>from a request's head to the end of its body the deadline is the read timeout: a body that does not arrive
 *       in time gets 408 with a problem body, and the connection is closed;</li>
 *   <li>while the service decides there is no deadline (the store has its own budget).</li>
 * </ul>
 * A request moves a deadline (two field writes), not a timer: the one timer of a connection wakes at most every
 * {@code min(read, idle)} timeout, looks at the deadline and sleeps again for what is left. Scheduling and
 * cancelling a timer per request (as this did before) cost a task, a priority-queue insert and removal, and a write
 * listener on every request.
 */
final class RequestTimeouts extends ChannelDuplexHandler {
    private final long readTimeoutNanos;
    private final long idleTimeoutNanos;
    /** The longest the timer sleeps: a new deadline is never earlier than the pending wake-up. */
    private final long stepNanos;
    /** {@link System#nanoTime()} deadline, or 0 while the service decides. */
    private long deadline;
    /** True while the deadline is a request body's (408 when missed), false between requests (close). */
    private boolean reading;

    private @Nullable ScheduledFuture<?> timer;

    RequestTimeouts(Duration readTimeout, Duration idleTimeout) {
        this.readTimeoutNanos = readTimeout.toNanos();
        this.idleTimeoutNanos = idleTimeout.toNanos();
        this.stepNanos = Math.max(1, Math.min(readTimeoutNanos, idleTimeoutNanos));
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            arm(ctx, idleTimeoutNanos, false);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        arm(ctx, idleTimeoutNanos, false);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        deadline = 0;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof HttpRequest) {
            arm(ctx, readTimeoutNanos, true);
        }
        if (msg instanceof LastHttpContent) {
            deadline = 0; // the service decides: no deadline until the answer is written
        }
        super.channelRead(ctx, msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof LastHttpContent && ctx.channel().isActive()) {
            arm(ctx, idleTimeoutNanos, false);
        }
        super.write(ctx, msg, promise);
    }

    private void arm(ChannelHandlerContext ctx, long timeoutNanos, boolean body) {
        deadline = System.nanoTime() + timeoutNanos;
        reading = body;
        if (timer == null) {
            timer = ctx.executor().schedule(() -> wake(ctx), stepNanos, TimeUnit.NANOSECONDS);
        }
    }

    private void wake(ChannelHandlerContext ctx) {
        timer = null;
        if (deadline == 0 || !ctx.channel().isActive()) {
            return; // deciding (the next deadline schedules anew) or closed
        }
        long left = deadline - System.nanoTime();
        if (left > 0) {
            timer = ctx.executor().schedule(() -> wake(ctx), Math.min(stepNanos, left), TimeUnit.NANOSECONDS);
        } else if (reading) {
            timeout(ctx);
        } else {
            ChannelFuture unused = ctx.close();
        }
    }

    private void timeout(ChannelHandlerContext ctx) {
        deadline = 0;
        FullHttpResponse r = HttpAnswers.closingProblem(
                HttpResponseStatus.REQUEST_TIMEOUT,
                "request-timeout",
                "the request body did not arrive within " + TimeUnit.NANOSECONDS.toMillis(readTimeoutNanos)
                        + " ms (--read-timeout)");
        ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
    }
}
