import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/**
 * The floor of any service on Netty's HTTP/1.1 stack, as the service builds it: one epoll event loop,
 * HttpServerCodec + HttpObjectAggregator, and a handler that reads nothing and answers a fixed small JSON body.
 * What `sluice serve` does beyond this (parse the check, decide, write the answer and its RateLimit headers,
 * count it) is its own cost. Run with the service's jar on the class path (Java's single-file launcher):
 *
 *   java -cp server/target/sluice-server-*-all.jar bench/server/NettyFloor.java 8091
 *
 * then load it as run.sh loads the service: wrk -t1 -c64 -d8s -s bench/server/post.lua http://127.0.0.1:8091/v1/check
 */
public class NettyFloor {
    static final byte[] BODY = "{\"overall_code\":\"OK\",\"statuses\":[{\"code\":\"OK\",\"remaining\":999}]}"
            .getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws Exception {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        new ServerBootstrap().group(boss, loop).channel(EpollServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65536),
                                new SimpleChannelInboundHandler<FullHttpRequest>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
                                        ByteBuf body = ctx.alloc().buffer(BODY.length).writeBytes(BODY);
                                        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                                                HttpResponseStatus.OK, body);
                                        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                                                .setInt(HttpHeaderNames.CONTENT_LENGTH, BODY.length);
                                        ctx.writeAndFlush(r);
                                    }
                                });
                    }
                })
                .bind("127.0.0.1", Integer.parseInt(args.length > 0 ? args[0] : "8091")).sync().channel().closeFuture().sync();
    }
}
