package dev.sluice.server.http;

import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.envoy.RlsService;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Not a test: what one {@code POST /v1/check} costs the service, in bytes allocated and CPU time on the event loop's
 * thread, through the server's own pipeline (HttpServerCodec, BoundedAggregator, HttpApiHandler) on an
 * {@link EmbeddedChannel}, the in-memory store, bench/server/post.lua's body for 1,000 users in turn. Both figures are
 * the thread's own ({@code ThreadMXBean}), so a busy machine moves them little. Run and figures: bench/server/README.md.
 */
public final class CheckCost {
    private CheckCost() {}

    public static void main(String[] a) throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        String rules = Files.readString(Path.of(a[0]));
        InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().build();
        DecisionService service = new DecisionService(
                limiter, "memory", RuleSet.parse("bench", rules), 250_000_000L, 64, new ServerMetrics());
        HttpApiHandler handler = new HttpApiHandler(service, new RlsService(service, EnvoyOptions.defaults()), null);
        EmbeddedChannel ch =
                new EmbeddedChannel(new HttpServerCodec(4096, 8192, 8192), new BoundedAggregator(1 << 16), handler);
        byte[][] reqs = new byte[1000][];
        for (int u = 0; u < 1000; u++) {
            String body = "{\"domain\":\"bench\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"u"
                    + (u + 1) + "\"}]}]}";
            String r =
                    "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1:8088\r\nContent-Type: application/json\r\nContent-Length: "
                            + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
            reqs[u] = r.getBytes(StandardCharsets.UTF_8);
        }
        int n = Integer.parseInt(a.length > 1 ? a[1] : "1000000");
        long t = Thread.currentThread().getId();
        long sink = 0;
        String sample = null;
        for (int round = 0; round < 8; round++) {
            // the harness alone: the inbound buffer and reading nothing
            long b0 = mx.getThreadAllocatedBytes(t);
            for (int i = 0; i < n; i++) {
                ByteBuf in = Unpooled.wrappedBuffer(reqs[i % 1000]);
                sink += in.readableBytes();
                in.release();
            }
            long harness = mx.getThreadAllocatedBytes(t) - b0;
            long c0 = mx.getCurrentThreadCpuTime();
            b0 = mx.getThreadAllocatedBytes(t);
            for (int i = 0; i < n; i++) {
                ch.writeInbound(Unpooled.wrappedBuffer(reqs[i % 1000]));
                ByteBuf out = ch.readOutbound();
                sink += out.readableBytes();
                if (i == 0 && sample == null) {
                    sample = out.toString(StandardCharsets.UTF_8);
                }
                out.release();
                Object more;
                while ((more = ch.readOutbound()) != null) {
                    io.netty.util.ReferenceCountUtil.release(more);
                }
            }
            long bytes = mx.getThreadAllocatedBytes(t) - b0 - harness;
            long cpu = mx.getCurrentThreadCpuTime() - c0;
            if (round >= 4) {
                System.out.printf(
                        "round %d: %.0f B/request, %.0f ns CPU/request (harness %.0f B subtracted)%n",
                        round, bytes / (double) n, cpu / (double) n, harness / (double) n);
            }
        }
        System.out.println(sample);
        System.out.println(sink == 42 ? "" : ".");
    }
}
