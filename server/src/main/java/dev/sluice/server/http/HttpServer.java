package dev.sluice.server.http;

import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.envoy.RlsService;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.Future;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP/JSON endpoint on Netty ({@link HttpTransport}: io_uring or epoll on Linux, NIO elsewhere): a few
 * event-loop threads serve every connection (no thread per request), connections are kept alive, and each is guarded
 * by {@link RequestTimeouts} (slow clients and idle connections are closed) and a body bound (larger bodies get 413
 * before they are buffered).
 */
public final class HttpServer implements AutoCloseable {
    /** The longest a step of {@link #stop} waits: the event loops' own timeout is 2 s. */
    private static final long STOP_WAIT_SECONDS = 5;

    private static final Logger log = LoggerFactory.getLogger(HttpServer.class);

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel channel;
    private final HttpApiHandler handler;
    private final HttpTransport transport;

    private HttpServer(
            EventLoopGroup boss,
            EventLoopGroup workers,
            Channel channel,
            HttpApiHandler handler,
            HttpTransport transport) {
        this.boss = boss;
        this.workers = workers;
        this.channel = channel;
        this.handler = handler;
        this.transport = transport;
    }

    /** Settings of the HTTP endpoint. */
    public record Options(
            int maxBodyBytes,
            Duration readTimeout,
            Duration idleTimeout,
            @Nullable String bearerToken,
            int threads,
            HttpTransport transport) {
        public static Options defaults() {
            return new Options(64 * 1024, Duration.ofSeconds(10), Duration.ofSeconds(60), null, 0, HttpTransport.AUTO);
        }
    }

    /** Binds and starts serving; throws when the address is taken. */
    public static HttpServer start(InetSocketAddress address, DecisionService service, RlsService rls, Options options)
            throws InterruptedException {
        HttpTransport transport = options.transport().resolve();
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, transport.handlers());
        // one loop per core, not Netty's two: a check never blocks, and on 2 cores beside other work 4 loops gave
        // 10-16% fewer checks/s and 2-3x the p99 of 2 loops (bench/server/README.md)
        int threads =
                options.threads() > 0 ? options.threads() : Runtime.getRuntime().availableProcessors();
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(threads, transport.handlers());
        HttpApiHandler handler = new HttpApiHandler(service, rls, options.bearerToken());
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(transport.serverChannel())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ChannelPipeline p = ch.pipeline();
                            p.addLast("codec", new HttpServerCodec(4096, 8192, 8192));
                            p.addLast("timeouts", new RequestTimeouts(options.readTimeout(), options.idleTimeout()));
                            p.addLast("aggregator", new BoundedAggregator(options.maxBodyBytes()));
                            p.addLast("api", handler);
                        }
                    });
            Channel ch = b.bind(address).sync().channel();
            return new HttpServer(boss, workers, ch, handler, transport);
        } catch (InterruptedException | RuntimeException e) {
            Future<?> unused = boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            unused = workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** The transport its event loops use ({@link HttpTransport#AUTO} resolved). */
    public HttpTransport transport() {
        return transport;
    }

    /** The bound address (the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    /**
     * Graceful stop: stop accepting, let in-flight requests finish (up to {@code grace}), then close every
     * connection.
     */
    public void stop(Duration grace) {
        // every wait here is bounded: a stop that waited for ever on a future would keep the process from exiting on
        // SIGTERM (seen once after minutes of load: the worker group's termination future never completed although
        // its threads had ended)
        if (!channel.close().awaitUninterruptibly(STOP_WAIT_SECONDS, TimeUnit.SECONDS)) {
            stopSlow("close_listener");
        }
        handler.draining(true);
        // a real wait, bounded by the grace: the requests in flight finish on Netty's event loops and the store's
        // time, and the caller (the shutdown hook) blocks on them anyway; a 10 ms poll of their count is enough
        long deadline = System.nanoTime() + grace.toNanos();
        while (handler.inFlight() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        Future<?> unused = boss.shutdownGracefully(0, 1, TimeUnit.SECONDS); // its one thread only accepts
        if (!workers.shutdownGracefully(0, 2, TimeUnit.SECONDS)
                .awaitUninterruptibly(STOP_WAIT_SECONDS, TimeUnit.SECONDS)) {
            stopSlow("event_loops");
        }
    }

    private static void stopSlow(String step) {
        log.atWarn()
                .addKeyValue("event", "http_stop_slow")
                .addKeyValue("step", step)
                .addKeyValue("waited", Duration.ofSeconds(STOP_WAIT_SECONDS))
                .log();
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(5));
    }
}
