package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Every request path of the service releases the buffers it takes: the HTTP API (answers, denials, every kind of
 * bad request, envoy's {@code /json}, pipelined requests) and envoy's gRPC API run under Netty's PARANOID leak
 * detection (every buffer tracked, in Netty and in gRPC's shaded Netty), the buffers are then collected, and no leak
 * may be reported. {@code sluice serve} turns Netty's sampled detection off for speed
 * ({@code ServeCommand.leakDetectionOff}); this test is what stands behind that.
 *
 * <p>The test proves it can see a leak first: a buffer dropped on purpose must be reported before the traffic runs.
 */
class NoBufferLeaksTest {

    @Test
    void everyRequestPathReleasesItsBuffers() throws Exception {
        Detector http = new Detector(ResourceLeakDetector.class.getName());
        Detector grpc = new Detector("io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector");
        ResourceLeakDetector.Level httpLevel = ResourceLeakDetector.getLevel();
        io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.Level grpcLevel =
                io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.setLevel(
                io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.Level.PARANOID);
        try {
            // the detector works in this JVM: one buffer dropped unreleased is reported
            ByteBufAllocator.DEFAULT.directBuffer(64).writeLong(1);
            assertThat(http.collect())
                    .as("a buffer dropped on purpose is reported")
                    .isNotEmpty();
            http.clear();

            try (TestServer s = TestServer.start("envoy/example1.yaml", "sluice-algorithms.yaml")) {
                for (int i = 0; i < 20; i++) {
                    assertThat(s.check("algos", "tb=a").status()).isIn(200, 429);
                    assertThat(s.post(TestServer.check("algos", 2, "gcra=b", "sw=c"))
                                    .status())
                            .isIn(200, 429);
                }
                assertThat(s.post("{\"domain\":").status()).isEqualTo(400);
                assertThat(s.post("{\"domain\":\"nope\",\"descriptors\":[]}").status())
                        .isBetween(400, 499);
                assertThat(s.post("{\"domain\":\"algos\",\"pad\":\"" + "x".repeat(70_000) + "\"}")
                                .status())
                        .isEqualTo(413);
                assertThat(TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/v1/check"))
                                        .header("Content-Type", "text/plain")
                                        .POST(HttpRequest.BodyPublishers.ofString("{}"))
                                        .build())
                                .status())
                        .isEqualTo(415);
                assertThat(s.get("/nowhere").status()).isEqualTo(404);
                assertThat(s.get("/healthz").status()).isEqualTo(200);
                assertThat(s.get("/metrics").status()).isEqualTo(200);
                assertThat(TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/json"))
                                        .POST(
                                                HttpRequest.BodyPublishers.ofString(
                                                        "{\"domain\":\"mongo_cps\",\"descriptors\":[{\"entries\":[{\"key\":\"database\",\"value\":\"users\"}]}]}"))
                                        .build())
                                .status())
                        .isEqualTo(200);
                byte[] one = RawHttp.post(
                        "/v1/check",
                        "application/json",
                        TestServer.check("algos", 1, "tb=pipelined").getBytes(StandardCharsets.UTF_8));
                byte[] three = new byte[one.length * 3];
                for (int i = 0; i < 3; i++) {
                    System.arraycopy(one, 0, three, i * one.length, one.length);
                }
                RawHttp.exchange(s.server.httpAddress().getPort(), three, false, 10_000);

                ManagedChannel channel = NettyChannelBuilder.forAddress(
                                "127.0.0.1", s.server.grpcAddress().getPort())
                        .usePlaintext()
                        .build();
                try {
                    RateLimitServiceGrpc.RateLimitServiceBlockingStub rls =
                            RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
                    for (int i = 0; i < 20; i++) {
                        rls.shouldRateLimit(RateLimitRequest.newBuilder()
                                .setDomain("mongo_cps")
                                .addDescriptors(RateLimitDescriptor.newBuilder()
                                        .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                                .setKey("database")
                                                .setValue("users")))
                                .build());
                    }
                } finally {
                    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
            assertThat(http.collect()).as("Netty (HTTP) reported leaks").isEmpty();
            assertThat(grpc.collect()).as("gRPC's Netty reported leaks").isEmpty();
        } finally {
            ResourceLeakDetector.setLevel(httpLevel);
            io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.setLevel(grpcLevel);
            http.close();
            grpc.close();
        }
    }

    /** The leak reports one of Netty's detectors logs (at ERROR, "LEAK: ..."), captured from its logger. */
    private static final class Detector implements AutoCloseable {
        private final Logger logger;
        private final ListAppender<ILoggingEvent> events = new ListAppender<>();

        Detector(String loggerName) {
            logger = (Logger) LoggerFactory.getLogger(loggerName);
            events.start();
            logger.addAppender(events);
        }

        /**
         * Lets the collector find unreleased buffers, then has the detectors look: a detector reports what was
         * collected when it next tracks a buffer, so a few buffers are taken and released (in both Nettys). Each
         * round proves that a collection happened ({@link #awaitCollection}) rather than assuming one.
         */
        List<String> collect() throws InterruptedException {
            for (int round = 0; round < 5; round++) {
                awaitCollection();
                for (int i = 0; i < 8; i++) {
                    ByteBuf b = ByteBufAllocator.DEFAULT.directBuffer(16);
                    b.release();
                    io.grpc.netty.shaded.io.netty.buffer.ByteBuf g =
                            io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator.DEFAULT.directBuffer(16);
                    g.release();
                }
            }
            return events.list.stream()
                    .map(ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.contains("LEAK"))
                    .collect(Collectors.toList());
        }

        void clear() {
            events.list.clear();
        }

        /**
         * Asks for a collection until one happened, at most 20 times ({@link System#gc()} is a hint a JVM may ignore,
         * and a leak detector only sees what a collection found): a canary object, only weakly reachable, is cleared
         * by the collection and queued by the reference handler thread, which queues the detectors' references of the
         * same collection with it.
         */
        private static void awaitCollection() throws InterruptedException {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            WeakReference<Object> canary = new WeakReference<>(new Object(), queue);
            for (int ask = 0; ask < 20; ask++) {
                System.gc();
                if (queue.remove(100) == canary) {
                    return;
                }
            }
            throw new AssertionError("no collection after 20 requests: the leak detectors could not see a leak");
        }

        @Override
        public void close() {
            logger.detachAppender(events);
            events.stop();
        }
    }
}
