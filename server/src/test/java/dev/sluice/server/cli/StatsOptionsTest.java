package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.PortInUseTest.Run;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code sluice serve}'s stats options: a bad value refuses the start (exit code 2, one {@code start_refused} line
 * naming the value and the fix) before anything is opened; the options are the ones envoy's environment maps onto.
 */
class StatsOptionsTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = ';',
            quoteCharacter = '"',
            value = {
                "--near-limit-ratio; 1.5; '1.5' is not a number in (0, 1]: give a share of the limit, e.g. 0.8",
                "--near-limit-ratio; lots; --near-limit-ratio 'lots' is not a number in (0, 1]",
                "--statsd-protocol; quic; 'quic' is not a statsd protocol: write tcp",
                "--stats-flush-interval; 10x; --stats-flush-interval: duration '10x'",
                "--stats-flush-interval; 0s; '0s' is shorter than a millisecond",
                "--statsd; 127.0.0.1:http; '127.0.0.1:http' is not an address",
                "--statsd; 127.0.0.1:0; has port 0: name the collector's port",
                "--prometheus-path; metrics; --prometheus-path 'metrics' is not a path: write one starting with '/'",
            })
    void aBadValueRefusesTheStartNamingItAndTheFix(String flag, String value, String message) {
        Run run = PortInUseTest.serve("--http", "127.0.0.1:0", "--grpc", "off", flag, value);
        assertThat(run.code()).as(run.err()).isEqualTo(2);
        assertThat(run.err()).contains("event=start_refused").contains(message);
    }

    @Test
    void theHelpListsEveryStatsOption() {
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = SluiceCommand.commandLine().execute("serve", "--help");
        } finally {
            System.setOut(out);
        }
        assertThat(code).isZero();
        assertThat(captured.toString(StandardCharsets.UTF_8))
                .contains("--statsd=HOST:PORT")
                .contains("--statsd-protocol=tcp|udp")
                .contains("--stats-flush-interval=DURATION")
                .contains("--near-limit-ratio=R")
                .contains("--prometheus=HOST:PORT")
                .contains("--prometheus-path=PATH");
    }
}
