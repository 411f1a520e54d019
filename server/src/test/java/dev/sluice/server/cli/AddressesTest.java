package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

class AddressesTest {

    @Test
    void anAddressIsHostAndPortOrAPortOnLoopback() {
        assertThat(Addresses.parse("--http", "0.0.0.0:8080")).isEqualTo(new InetSocketAddress(ip(0, 0, 0, 0), 8080));
        assertThat(Addresses.parse("--http", ":8081")).isEqualTo(new InetSocketAddress(ip(127, 0, 0, 1), 8081));
        assertThat(Addresses.parse("--grpc", "8082")).isEqualTo(new InetSocketAddress(ip(127, 0, 0, 1), 8082));
        assertThat(Addresses.parse("--grpc", "off")).isNull();
    }

    /** Integer.parseInt reads other scripts' digits too ('\u0668\u0660\u0668\u0660' as 8080): a port is 0-9. */
    @Test
    void aPortIsWrittenWithTheDigitsZeroToNine() {
        for (String bad : new String[] {"127.0.0.1:\u0668\u0660\u0668\u0660", "8\uFF10", "65536", "-1", "+80", ""}) {
            assertThatThrownBy(() -> Addresses.parse("--http", bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("--http '" + bad + "' is not an address: write host:port, e.g. 127.0.0.1:8080 or"
                            + " 0.0.0.0:8080, or 'off'");
        }
    }

    private static InetAddress ip(int a, int b, int c, int d) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
