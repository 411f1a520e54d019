package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code sluice serve} on a taken port: its refusal names the address and the flag that chose it, and it exits 2. */
class PortInUseTest {
    /** A hang guard only: a serve that did bind would wait for Ctrl-C. */
    private static final Duration GUARD = Duration.ofSeconds(60);

    @Test
    void aTakenHttpPortIsNamedWithItsFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            Run run = serve("--http", "127.0.0.1:" + port, "--grpc", "off");
            assertThat(run.code).isEqualTo(2);
            assertThat(run.err)
                    .contains("event=start_refused reason=\"127.0.0.1:" + port + " is in use (--http): ")
                    .contains("Address already in use")
                    .contains("choose another port, e.g. --http 127.0.0.1:" + (port + 100));
        }
    }

    @Test
    void aTakenGrpcPortIsNamedWithItsFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            Run run = serve("--http", "127.0.0.1:0", "--grpc", "127.0.0.1:" + port);
            assertThat(run.code).isEqualTo(2);
            assertThat(run.err)
                    .contains("event=start_refused reason=\"127.0.0.1:" + port + " is in use (--grpc): ")
                    .contains("e.g. --grpc 127.0.0.1:" + (port + 100) + " (--grpc off: no gRPC)");
        }
    }

    @Test
    void aTakenPrometheusPortIsNamedWithItsFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            Run run = serve("--http", "127.0.0.1:0", "--grpc", "off", "--prometheus", "127.0.0.1:" + port);
            assertThat(run.code).isEqualTo(2);
            assertThat(run.err)
                    .contains("event=start_refused reason=\"127.0.0.1:" + port + " is in use (--prometheus): ")
                    .contains("e.g. --prometheus 127.0.0.1:" + (port + 100) + " (--prometheus off: no Prometheus)");
        }
    }

    record Run(int code, String err) {}

    static Run serve(String... flags) {
        String[] args = new String[flags.length + 1];
        args[0] = "serve";
        System.arraycopy(flags, 0, args, 1, flags.length);
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            int code = assertTimeoutPreemptively(
                    GUARD, () -> SluiceCommand.commandLine().execute(args));
            return new Run(code, captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(err);
        }
    }
}
