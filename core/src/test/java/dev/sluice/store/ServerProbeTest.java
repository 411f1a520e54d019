package dev.sluice.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.store.ServerProbe.Speaks;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * How {@link ServerProbe} reads the first bytes of an answer. It is asked of real Redis and PostgreSQL servers (each
 * at the other's port, TLS against plain) in the redis and postgres modules; here, what needs no server.
 */
class ServerProbeTest {

    @Test
    void theFirstBytesOfAnAnswerSayWhoSpeaks() {
        assertThat(ServerProbe.recognize(new byte[] {'N'}, true)).isEqualTo(Speaks.POSTGRESQL);
        assertThat(ServerProbe.recognize(new byte[] {'S'}, true)).isEqualTo(Speaks.POSTGRESQL);
        assertThat(ServerProbe.recognize(ascii("+PONG\r\n"), false)).isEqualTo(Speaks.REDIS);
        assertThat(ServerProbe.recognize(ascii("-NOAUTH Authentication required.\r\n"), false))
                .isEqualTo(Speaks.REDIS);
        assertThat(ServerProbe.recognize(ascii("HTTP/1.1 400 Bad Request\r\n"), false))
                .isEqualTo(Speaks.HTTP);
        assertThat(ServerProbe.recognize(new byte[] {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32}, false))
                .isEqualTo(Speaks.TLS);
        assertThat(ServerProbe.recognize(new byte[0], false)).isEqualTo(Speaks.UNKNOWN);
        assertThat(ServerProbe.recognize(ascii("+PONG\r\n"), true))
                .as("not an answer to SSLRequest")
                .isEqualTo(Speaks.UNKNOWN);
        assertThat(ServerProbe.recognize(new byte[] {'N'}, false))
                .as("not an answer to PING")
                .isEqualTo(Speaks.UNKNOWN);
    }

    @Test
    void aPortNobodyListensOnIsNoConnectionAndASilentOneIsUnknown() throws Exception {
        int free;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            free = s.getLocalPort();
        }
        assertThat(ServerProbe.identify("127.0.0.1", free, Duration.ofMillis(200)))
                .isEqualTo(Speaks.NO_CONNECTION);
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            // the kernel accepts into the backlog; nothing ever reads or answers
            assertThat(ServerProbe.identify("127.0.0.1", silent.getLocalPort(), Duration.ofMillis(100)))
                    .isEqualTo(Speaks.UNKNOWN);
        }
        assertThat(ServerProbe.identify("no-such-host.invalid", 6379, Duration.ofMillis(200)))
                .isEqualTo(Speaks.NO_CONNECTION);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
