package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.ManualTicker;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.cli.SluiceCommand;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.stats.StatsSinks;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@code --http-transport}: what each value means here, and the same answers on every transport. */
class HttpTransportTest {
    /** 2026-01-01T00:00:00Z. */
    private static final long T0 = 1_767_225_600L * 1_000_000_000L;

    private static final HttpClient CLIENT =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void autoTakesTheFirstOfIoUringEpollAndNioThatIsAvailable() {
        Throwable missing = new UnsupportedOperationException("not here");
        assertThat(HttpTransport.AUTO.resolve(null, null)).isEqualTo(HttpTransport.IO_URING);
        assertThat(HttpTransport.AUTO.resolve(missing, null)).isEqualTo(HttpTransport.EPOLL);
        assertThat(HttpTransport.AUTO.resolve(missing, missing)).isEqualTo(HttpTransport.NIO);
        assertThat(HttpTransport.EPOLL.resolve(missing, null)).isEqualTo(HttpTransport.EPOLL);
        assertThat(HttpTransport.NIO.resolve(missing, missing)).isEqualTo(HttpTransport.NIO);
    }

    @Test
    void aTransportNamedButUnavailableStopsTheStartNamingWhyAndTheFix() {
        Throwable seccomp = new UnsupportedOperationException("io_uring_setup: Operation not permitted");
        assertThatThrownBy(() -> HttpTransport.IO_URING.resolve(seccomp, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--http-transport io_uring: not available on this machine")
                .hasMessageContaining("Operation not permitted")
                .hasMessageContaining("use --http-transport auto");
        assertThatThrownBy(() -> HttpTransport.fromConfigName("kqueue"))
                .hasMessage("--http-transport 'kqueue' is not a transport: use auto (the default: io_uring, else"
                        + " epoll, else nio), io_uring, epoll or nio");
        assertThat(HttpTransport.fromConfigName("io_uring")).isEqualTo(HttpTransport.IO_URING);
        assertThat(HttpTransport.fromConfigName(" EPOLL "))
                .as("any case, as --semantics and the other options")
                .isEqualTo(HttpTransport.EPOLL);
    }

    @Test
    void serveRefusesAnUnknownTransportBeforeItOpensAnything() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = SluiceCommand.commandLine().execute("serve", "--http-transport", "kqueue", "--grpc", "off");
        } finally {
            System.setErr(err);
        }
        assertThat(code).isEqualTo(2);
        assertThat(captured.toString(StandardCharsets.UTF_8)).contains("--http-transport 'kqueue' is not a transport");
    }

    @ParameterizedTest
    @EnumSource(HttpTransport.class)
    void everyTransportAnswersTheSameChecks(HttpTransport transport) throws Exception {
        assumeTrue(transport != HttpTransport.IO_URING || IoUring.isAvailable(), "io_uring is not available here");
        assumeTrue(transport != HttpTransport.EPOLL || Epoll.isAvailable(), "epoll is not available here");
        ManualTicker ticker = ManualTicker.atEpochNanos(T0);
        SluiceServer.Settings s = SluiceServer.Settings.defaults(
                        InMemoryRateLimiter.builder().ticker(ticker).build(), RuleSet.builtinExample())
                .withGrpc(null);
        try (SluiceServer server = SluiceServer.start(s, 1024, 1, transport, false, StatsSinks.none())) {
            assertThat(server.httpTransport())
                    .isEqualTo(transport == HttpTransport.AUTO ? HttpTransport.AUTO.resolve() : transport);
            URI check = URI.create("http://127.0.0.1:" + server.httpAddress().getPort() + "/v1/check");
            String body = "{\"domain\":\"api\",\"descriptors\":[{\"entries\":"
                    + "[{\"key\":\"remote_address\",\"value\":\"198.51.100.1\"}]}]}";
            List<Integer> codes = new ArrayList<>();
            for (int i = 0; i < 21; i++) {
                HttpResponse<String> r = CLIENT.send(
                        HttpRequest.newBuilder(check)
                                .header("content-type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                codes.add(r.statusCode());
            }
            assertThat(codes.subList(0, 20))
                    .as("a burst of 20 on the manual clock")
                    .containsOnly(200);
            assertThat(codes.get(20)).isEqualTo(429);
        }
    }
}
