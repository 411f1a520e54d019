package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.UInt64Value;
import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.config.Semantics;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.http.HttpTransport;
import dev.sluice.server.stats.EnvoyStats;
import dev.sluice.server.stats.StatsSinks;
import dev.sluice.server.stats.StatsdSink;
import dev.sluice.tck.Eventually;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The statsd comparison: {@code sluice serve} answers envoy's gRPC {@code ShouldRateLimit} under envoy's own
 * configuration files, and a statsd collector listening on 127.0.0.1 (a real TCP server socket, and a UDP one)
 * receives the names and values envoy's service sends for the same traffic. Each expected line is written by hand
 * from envoy's limiter ({@code src/limiter/base_limiter.go}) and pinned by its tests: the counts before and after
 * each request are those of {@code test/redis/fixed_cache_impl_test.go}'s TestNearLimit cases (under the limit
 * past the near threshold; some hits over the limit), shadow mode as {@code test/limiter/base_limiter_test.go}'s
 * TestGetResponseStatusOverLimitShadowMode, the names as {@code src/stats/manager_impl.go} builds them and
 * {@code test/stats/manager_impl_test.go} reads them. Flushes are driven on a {@link ManualScheduler}; only the
 * collector's side waits for the socket.
 */
class EnvoyStatsdTest {
    private static final String RULES_SHADOW = "envoy-upstream/test/config/shadowmode_config.yaml";
    private static final String RULES_BASIC =
            "envoy-upstream/test/integration/runtime/current/ratelimit/config/basic.yaml";
    private static final Duration FLUSH = Duration.ofSeconds(10);
    private static final String P = "ratelimit.service.rate_limit.";

    private final ManualScheduler flushes = ManualScheduler.on(ManualTicker.atEpochNanos(0));
    private final List<AutoCloseable> closing = new ArrayList<>();
    private RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    @AfterEach
    void close() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    /** envoy's files, unchanged, on a memory store at a fixed instant (every window starts at T0). */
    private SluiceServer serve(StatsSinks sinks) throws Exception {
        return serve(sinks, UnaryOperator.identity());
    }

    private SluiceServer serve(StatsSinks sinks, UnaryOperator<SluiceServer.Settings> tweak) throws Exception {
        RuleSet rules = RuleSet.parse(
                "envoy", TestServer.resource(RULES_SHADOW) + "\n---\n" + TestServer.resource(RULES_BASIC));
        RateLimiter limiter = InMemoryRateLimiter.builder()
                .ticker(ManualTicker.atEpochNanos(TestServer.T0))
                .build();
        SluiceServer server = SluiceServer.start(
                tweak.apply(SluiceServer.Settings.defaults(limiter, rules)), 1024, 1, HttpTransport.AUTO, false, sinks);
        closing.add(server);
        ManagedChannel channel = NettyChannelBuilder.forAddress(
                        "127.0.0.1", server.grpcAddress().getPort())
                .usePlaintext()
                .build();
        closing.add(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        rls = RateLimitServiceGrpc.newBlockingStub(channel);
        return server;
    }

    private StatsSinks sinks(@Nullable InetSocketAddress statsd, StatsdSink.Protocol protocol) {
        return new StatsSinks(new EnvoyStats(), statsd, protocol, FLUSH, null, "/metrics", flushes, Runnable::run);
    }

    /** A descriptor of {@code key=value} entries, with its own hits_addend unless that is negative. */
    private static RateLimitDescriptor descriptor(long hitsAddend, String... kvs) {
        RateLimitDescriptor d = GrpcRlsTest.descriptor(kvs);
        return hitsAddend < 0
                ? d
                : d.toBuilder().setHitsAddend(UInt64Value.of(hitsAddend)).build();
    }

    /** One ShouldRateLimit call; returns the overall code. */
    private Code call(String domain, int hitsAddend, RateLimitDescriptor... ds) {
        RateLimitRequest.Builder b =
                RateLimitRequest.newBuilder().setDomain(domain).setHitsAddend(hitsAddend);
        for (RateLimitDescriptor d : ds) {
            b.addDescriptors(d);
        }
        return rls.withDeadlineAfter(30, TimeUnit.SECONDS)
                .shouldRateLimit(b.build())
                .getOverallCode();
    }

    /** The traffic of the comparison, with envoy's answers to it. */
    private void envoysTraffic() {
        // test-domain key2_value2: 30 a minute (near threshold floor(30 * 0.8) = 24)
        assertThat(call("test-domain", 25, descriptor(-1, "key2=value2"))).isEqualTo(Code.OK); // 0 -> 25
        assertThat(call("test-domain", 4, descriptor(-1, "key2=value2"))).isEqualTo(Code.OK); // 25 -> 29
        assertThat(call("test-domain", 3, descriptor(-1, "key2=value2"))).isEqualTo(Code.OVER_LIMIT); // 29 -> 32
        assertThat(call("test-domain", 0, descriptor(0, "key2=value2"))) // a check: adds 0 everywhere
                .isEqualTo(Code.OVER_LIMIT);
        // test-domain key2 (no value), shadow mode: 20 a minute (threshold 16): over, answered OK
        assertThat(call("test-domain", 22, descriptor(-1, "key2=foo"))).isEqualTo(Code.OK); // 0 -> 22
        assertThat(call("test-domain", 1, descriptor(-1, "key2=bar"))).isEqualTo(Code.OK); // another counter, 0 -> 1
        // test-domain key1_value1.subkey1: 5 a second (threshold 4), six single hits
        for (int i = 1; i <= 6; i++) {
            assertThat(call("test-domain", 1, descriptor(-1, "key1=value1", "subkey1=x")))
                    .isEqualTo(i <= 5 ? Code.OK : Code.OVER_LIMIT);
        }
        // test-domain key1_value1.subkey1_subvalue1, shadow mode: 10 a second (threshold 8), the descriptor's own
        // hits_addend (12) beside a request's (1) for another descriptor: basic's key1, 50 a second
        assertThat(call(
                        "basic",
                        1,
                        descriptor(-1, "key1=anything"),
                        descriptor(-1, "one_per_minute=a"),
                        descriptor(-1, "one_per_minute=a")))
                .isEqualTo(Code.OVER_LIMIT); // one_per_minute: 0 -> 1 (near: threshold 0), then 1 -> 2 (over)
        assertThat(call("test-domain", 1, descriptor(12, "key1=value1", "subkey1=subvalue1"))) // 0 -> 12
                .isEqualTo(Code.OK);
        // no such domain: nothing limited, nothing counted; no domain: envoy's service_error
        assertThat(call("nope", 1, descriptor(-1, "key2=value2"))).isEqualTo(Code.OK);
        assertThatThrownBy(() -> call("", 1, descriptor(-1, "key2=value2")))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
    }

    /** What envoy's service sends for {@link #envoysTraffic()} at its first flush. */
    private static final List<String> ENVOYS_LINES = List.of(
            "ratelimit.service.config_load_success:1|c",
            "ratelimit.service.call.should_rate_limit.service_error:1|c",
            // 25 (1 past 24), 4 (all past 24), 3 (2 over 30, 1 between 29 and 30)
            P + "test-domain.key2_value2.total_hits:32|c",
            P + "test-domain.key2_value2.within_limit:29|c",
            P + "test-domain.key2_value2.near_limit:6|c",
            P + "test-domain.key2_value2.over_limit:2|c",
            // 22 in one call: 2 over 20, 4 between 16 and 20, the 2 over in shadow mode; then 1 within
            P + "test-domain.key2.total_hits:23|c",
            P + "test-domain.key2.over_limit:2|c",
            P + "test-domain.key2.near_limit:4|c",
            P + "test-domain.key2.shadow_mode:2|c",
            P + "test-domain.key2.within_limit:1|c",
            // 1, 2, 3, 4 within; the 5th past 4, within; the 6th over 5
            P + "test-domain.key1_value1.subkey1.total_hits:6|c",
            P + "test-domain.key1_value1.subkey1.within_limit:5|c",
            P + "test-domain.key1_value1.subkey1.near_limit:1|c",
            P + "test-domain.key1_value1.subkey1.over_limit:1|c",
            // 12 in one call: 2 over 10, 2 between 8 and 10, the 2 over in shadow mode
            P + "test-domain.key1_value1.subkey1_subvalue1.total_hits:12|c",
            P + "test-domain.key1_value1.subkey1_subvalue1.over_limit:2|c",
            P + "test-domain.key1_value1.subkey1_subvalue1.near_limit:2|c",
            P + "test-domain.key1_value1.subkey1_subvalue1.shadow_mode:2|c",
            P + "basic.key1.total_hits:1|c",
            P + "basic.key1.within_limit:1|c",
            // a limit of 1: the first hit is past the threshold floor(0.8) = 0, the second over
            P + "basic.one_per_minute.total_hits:2|c",
            P + "basic.one_per_minute.within_limit:1|c",
            P + "basic.one_per_minute.near_limit:1|c",
            P + "basic.one_per_minute.over_limit:1|c");

    @Test
    void statsdOverTcpReceivesEnvoysNamesAndValues() throws Exception {
        try (TcpCollector collector = TcpCollector.listen(0)) {
            SluiceServer server = serve(sinks(collector.address(), StatsdSink.Protocol.TCP));
            StatsdSink sink = server.statsSinks().statsd();
            envoysTraffic();
            assertThat(collector.lines())
                    .as("nothing before the flush interval")
                    .isEmpty();

            assertThat(server.statsSinks().describe())
                    .isEqualTo("statsd tcp://" + collector.address().getHostString() + ":"
                            + collector.address().getPort()
                            + " every 10s   (envoyproxy/ratelimit's stats, under its names)");
            flushes.advance(FLUSH);
            assertThat(collector.await(ENVOYS_LINES.size())).containsExactlyInAnyOrderElementsOf(ENVOYS_LINES);

            // a counter is sent what it grew by since the last flush (gostats' latch), and only if it grew
            assertThat(call("test-domain", 1, descriptor(-1, "key2=value2"))).isEqualTo(Code.OVER_LIMIT); // 32->33
            flushes.advance(FLUSH);
            assertThat(collector.await(2))
                    .containsExactlyInAnyOrder(
                            P + "test-domain.key2_value2.total_hits:1|c", P + "test-domain.key2_value2.over_limit:1|c");
            flushes.advance(FLUSH);
            assertThat(collector.lines()).as("nothing grew: nothing sent").isEmpty();
            assertThat(sink.droppedLines()).isZero();
        }
    }

    @Test
    void aCollectorThatRestartsIsFoundAgainAndWhatItMissedIsCountedAsDropped() throws Exception {
        int port;
        StatsdSink sink;
        try (TcpCollector collector = TcpCollector.listen(0)) {
            port = collector.address().getPort();
            sink = serve(sinks(collector.address(), StatsdSink.Protocol.TCP))
                    .statsSinks()
                    .statsd();
            call("basic", 1, descriptor(-1, "key1=a"));
            flushes.advance(FLUSH);
            assertThat(collector.await(3)).hasSize(3); // config_load_success, total_hits, within_limit
        }
        // away: the decisions go on, the flush's two lines are dropped and counted
        assertThat(call("basic", 1, descriptor(-1, "key1=a"))).isEqualTo(Code.OK);
        flushes.advance(FLUSH);
        assertThat(sink.droppedLines()).isEqualTo(2);
        try (TcpCollector back = TcpCollector.listen(port)) {
            assertThat(call("basic", 2, descriptor(-1, "key1=a"))).isEqualTo(Code.OK);
            flushes.advance(FLUSH);
            assertThat(back.await(2))
                    .containsExactlyInAnyOrder(P + "basic.key1.total_hits:2|c", P + "basic.key1.within_limit:2|c");
            assertThat(sink.droppedLines()).isEqualTo(2);
        }
    }

    @Test
    void statsdOverUdpReceivesTheSameLinesInDatagramsOfAtMost1432Bytes() throws Exception {
        try (DatagramSocket collector =
                new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            collector.setSoTimeout(10_000); // a hang guard: each datagram is already sent when it is read
            serve(sinks((InetSocketAddress) collector.getLocalSocketAddress(), StatsdSink.Protocol.UDP));
            envoysTraffic();
            flushes.advance(FLUSH);
            List<String> lines = new ArrayList<>();
            while (lines.size() < ENVOYS_LINES.size()) {
                DatagramPacket p = new DatagramPacket(new byte[65_536], 65_536);
                collector.receive(p);
                String text = new String(p.getData(), 0, p.getLength(), StandardCharsets.UTF_8);
                assertThat(p.getLength()).isLessThanOrEqualTo(1432);
                assertThat(text).endsWith("\n");
                lines.addAll(List.of(text.split("\n")));
            }
            assertThat(lines).containsExactlyInAnyOrderElementsOf(ENVOYS_LINES);
        }
    }

    /**
     * envoy's Prometheus names for the same traffic, on an address of their own: its default mapper's labels
     * (src/stats/prom/default_mapper.yaml; test/… prometheus_sink_test.go's TestFlushCounterWithDifferentLabels).
     */
    @Test
    void prometheusServesEnvoysMappedNamesOnItsOwnAddress() throws Exception {
        StatsSinks sinks = new StatsSinks(
                new EnvoyStats(),
                null,
                StatsdSink.Protocol.TCP,
                FLUSH,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                "/metrics",
                flushes,
                Runnable::run);
        SluiceServer server = serve(sinks);
        envoysTraffic();
        InetSocketAddress at = server.statsSinks().prometheusAddress();
        assertThat(server.statsSinks().describe())
                .isEqualTo("Prometheus http://127.0.0.1:" + at.getPort()
                        + "/metrics   (envoyproxy/ratelimit's stats, under its names)");
        TestServer.Resp r =
                TestServer.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + at.getPort() + "/metrics"))
                        .GET()
                        .build());
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body())
                .contains("# TYPE ratelimit_service_rate_limit_total_hits counter\n")
                .contains("ratelimit_service_rate_limit_total_hits{domain=\"test-domain\",key1=\"key2_value2\"} 32\n")
                .contains("ratelimit_service_rate_limit_over_limit{domain=\"test-domain\",key1=\"key2_value2\"} 2\n")
                .contains("ratelimit_service_rate_limit_shadow_mode{domain=\"test-domain\",key1=\"key2\"} 2\n")
                .contains("ratelimit_service_rate_limit_near_limit"
                        + "{domain=\"test-domain\",key1=\"key1_value1\",key2=\"subkey1\"} 1\n")
                .contains("ratelimit_service_rate_limit_within_limit{domain=\"basic\",key1=\"one_per_minute\"} 1\n")
                .contains("ratelimit_service_should_rate_limit_error{err_type=\"service_error\"} 1\n")
                .contains("ratelimit_service_config_load_success 1\n")
                .doesNotContain("sluice_");
        assertThat(TestServer.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + at.getPort() + "/other"))
                                .GET()
                                .build())
                        .status())
                .isEqualTo(404);
    }

    /**
     * With Sluice's strict semantics a denial takes nothing, yet the stats read each answer as envoy counts: the
     * denied hits on top of what the limit holds. So the first requests count as under envoy's semantics; the next
     * one, which envoy would find over, fits here (the 3 denied hits were never taken) and counts within.
     */
    @Test
    void strictSemanticsCountEachAnswerAsEnvoyReadsIt() throws Exception {
        SluiceServer server = serve(
                sinks(null, StatsdSink.Protocol.TCP),
                s -> s.withEnvoy(new EnvoyOptions(Semantics.STRICT, EnvoyOptions.Headers.NONE, false)));
        assertThat(call("test-domain", 25, descriptor(-1, "key2=value2"))).isEqualTo(Code.OK); // 0 -> 25
        assertThat(call("test-domain", 4, descriptor(-1, "key2=value2"))).isEqualTo(Code.OK); // 25 -> 29
        assertThat(call("test-domain", 3, descriptor(-1, "key2=value2"))).isEqualTo(Code.OVER_LIMIT); // 29 (+3)
        EnvoyStats stats = server.service().metrics().envoyStats();
        String key = P + "test-domain.key2_value2.";
        assertThat(new long[] {
                    stats.total(key + "total_hits"),
                    stats.total(key + "within_limit"),
                    stats.total(key + "near_limit"),
                    stats.total(key + "over_limit")
                })
                .containsExactly(32, 29, 6, 2);
        assertThat(call("test-domain", 1, descriptor(-1, "key2=value2"))).isEqualTo(Code.OK); // 29 -> 30
        assertThat(new long[] {
                    stats.total(key + "total_hits"),
                    stats.total(key + "within_limit"),
                    stats.total(key + "near_limit"),
                    stats.total(key + "over_limit")
                })
                .containsExactly(33, 30, 7, 2);
        assertThatThrownBy(() -> call("", 1, descriptor(-1, "key2=value2"))).isInstanceOf(StatusRuntimeException.class);
        assertThat(stats.total("ratelimit.service.call.should_rate_limit.service_error"))
                .isEqualTo(1);
    }

    /** A statsd collector over TCP on 127.0.0.1: every line it reads, in order. */
    private static final class TcpCollector implements AutoCloseable {
        private final ServerSocket server;
        private final List<Socket> accepted = new CopyOnWriteArrayList<>();
        private final List<Thread> readers = new CopyOnWriteArrayList<>();
        private final List<String> received = new CopyOnWriteArrayList<>();
        private int taken;

        private TcpCollector(ServerSocket server) {
            this.server = server;
            Thread t = new Thread(this::accept, "statsd-collector");
            t.setDaemon(true);
            t.start();
        }

        static TcpCollector listen(int port) throws IOException {
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return new TcpCollector(s);
        }

        InetSocketAddress address() {
            return (InetSocketAddress) server.getLocalSocketAddress();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    accepted.add(s);
                    Thread r = new Thread(() -> read(s), "statsd-collector-reader");
                    r.setDaemon(true);
                    readers.add(r);
                    r.start();
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private void read(Socket s) {
            try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    received.add(line);
                }
            } catch (IOException closed) {
                // the collector stopped
            }
        }

        /** The lines received since the last call. */
        synchronized List<String> lines() {
            List<String> out = new ArrayList<>(received.subList(taken, received.size()));
            taken = received.size();
            return out;
        }

        /** Waits for {@code n} lines since the last call, and returns them (with any more that came). */
        List<String> await(int n) {
            Eventually.await(Duration.ofSeconds(10), n + " statsd lines", () -> received.size() - taken >= n);
            return lines();
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : accepted) {
                s.close();
            }
            // a socket closed while its reader is blocked in read() is closed for real (FIN sent) only once that
            // reader has left the read: wait for it, or the sink may still find the connection held
            for (Thread r : readers) {
                try {
                    r.join(10_000); // a hang guard, not a budget
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while the collector's readers stopped", e);
                }
            }
        }
    }
}
