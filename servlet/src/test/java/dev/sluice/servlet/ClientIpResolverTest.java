package dev.sluice.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.servlet.ClientIpResolver.Header;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClientIpResolverTest {
    private final ClientIpResolver xff =
            ClientIpResolver.trusting(Header.X_FORWARDED_FOR, List.of("10.0.0.0/8", "fd00::/8"));
    private final ClientIpResolver fwd = ClientIpResolver.trusting(Header.FORWARDED, List.of("10.0.0.0/8"));

    @Test
    void untrustedPeerIsTheClientWhateverTheHeaderSays() {
        assertThat(xff.resolve("192.0.2.9", List.of("198.51.100.1"))).isEqualTo("192.0.2.9");
        assertThat(ClientIpResolver.peerOnly().resolve("10.0.0.1", List.of("198.51.100.1")))
                .isEqualTo("10.0.0.1");
    }

    @Test
    void rightmostUntrustedHopIsTheClientSoALeftmostSpoofIsIgnored() {
        assertThat(xff.resolve("10.0.0.1", List.of("6.6.6.6, 198.51.100.1, 10.0.0.2")))
                .isEqualTo("198.51.100.1");
        // two header lines are one list, in order
        assertThat(xff.resolve("10.0.0.1", List.of("6.6.6.6", "198.51.100.1"))).isEqualTo("198.51.100.1");
    }

    @Test
    void allTrustedChainEndsAtTheLeftmostProxy() {
        assertThat(xff.resolve("10.0.0.1", List.of("10.0.0.3, 10.0.0.2"))).isEqualTo("10.0.0.3");
    }

    @Test
    void malformedOrUnknownHopStopsAtTheProxyThatWroteIt() {
        assertThat(xff.resolve("10.0.0.1", List.of("198.51.100.1, unknown, 10.0.0.2")))
                .isEqualTo("10.0.0.2");
        assertThat(xff.resolve("10.0.0.1", List.of("not an address"))).isEqualTo("10.0.0.1");
        assertThat(xff.resolve("10.0.0.1", List.of("example.com"))).isEqualTo("10.0.0.1"); // never resolved
        assertThat(xff.resolve("10.0.0.1", List.of("1.2.3.04"))).isEqualTo("10.0.0.1"); // leading zero
        assertThat(xff.resolve("10.0.0.1", List.of("x".repeat(100_000)))).isEqualTo("10.0.0.1");
        assertThat(xff.resolve("10.0.0.1", List.of(",,,"))).isEqualTo("10.0.0.1");
    }

    @Test
    void portsZonesAndIpv6SpellingsAreOneClient() {
        String canonical = "2001:db8:0:0:0:0:0:1";
        assertThat(xff.resolve("10.0.0.1", List.of("2001:db8::1"))).isEqualTo(canonical);
        assertThat(xff.resolve("10.0.0.1", List.of("[2001:DB8:0::1]:443"))).isEqualTo(canonical);
        assertThat(xff.resolve("10.0.0.1", List.of("2001:db8::1%eth0"))).isEqualTo(canonical);
        assertThat(xff.resolve("10.0.0.1", List.of("[2001:db8::1%25en0]"))).isEqualTo(canonical);
        assertThat(xff.resolve("10.0.0.1", List.of("198.51.100.1:5555"))).isEqualTo("198.51.100.1");
        assertThat(xff.resolve("10.0.0.1", List.of("::ffff:198.51.100.1"))).isEqualTo("198.51.100.1");
        assertThat(xff.resolve("fd00::5", List.of("198.51.100.1"))).isEqualTo("198.51.100.1");
    }

    @Test
    void forwardedHeaderReadsForParameters() {
        assertThat(fwd.resolve(
                        "10.0.0.1", List.of("for=6.6.6.6, for=\"[2001:db8:cafe::17]:4711\";proto=https;by=10.0.0.1")))
                .isEqualTo("2001:db8:cafe:0:0:0:0:17");
        assertThat(fwd.resolve("10.0.0.1", List.of("For=198.51.100.1;proto=http, for=10.0.0.2")))
                .isEqualTo("198.51.100.1");
        assertThat(fwd.resolve("10.0.0.1", List.of("for=_hidden"))).isEqualTo("10.0.0.1");
        assertThat(fwd.resolve("10.0.0.1", List.of("for=\"198.51.100.1"))).isEqualTo("10.0.0.1"); // unterminated
        assertThat(fwd.resolve("10.0.0.1", List.of("proto=https"))).isEqualTo("10.0.0.1"); // no for=
        assertThat(fwd.resolve("10.0.0.1", List.of("for=1.1.1.1;for=2.2.2.2"))).isEqualTo("10.0.0.1"); // ambiguous
        assertThat(fwd.resolve("10.0.0.1", List.of("garbage;;,=,\"\""))).isEqualTo("10.0.0.1");
    }

    @Test
    void forwardedResolverIgnoresXForwardedForAndViceVersa() {
        // each resolver reads only its header; the values handed in are that header's
        assertThat(fwd.header()).isEqualTo(Header.FORWARDED);
        assertThat(fwd.resolve("10.0.0.1", List.of("198.51.100.1"))).isEqualTo("10.0.0.1"); // not a Forwarded pair
    }

    @Test
    void chainsLongerThanTheHopLimitStopAtTheLastExaminedProxy() {
        String chain = "198.51.100.1, " + "10.0.0.9, ".repeat(40) + "10.0.0.8";
        assertThat(xff.resolve("10.0.0.1", List.of(chain))).isEqualTo("10.0.0.9");
    }

    @Test
    void badTrustedProxyBlocksNameTheValueAndTheForm() {
        assertThatThrownBy(() -> ClientIpResolver.trusting(Header.FORWARDED, List.of("proxy.internal")))
                .hasMessageContaining("'proxy.internal'")
                .hasMessageContaining("10.0.0.0/8");
        assertThatThrownBy(() -> Cidr.parse("10.0.0.0/33"))
                .hasMessageContaining("prefix length '33'")
                .hasMessageContaining("0 to 32");
        assertThatThrownBy(() -> Cidr.parse("10.0.0.0/\u0662\u0664")) // Arabic-Indic 24: Integer.parseInt reads it
                .hasMessageContaining("prefix length '\u0662\u0664'")
                .hasMessageContaining("0 to 32");
    }

    @Test
    void cidrMatchesItsBlockOnly() {
        assertThat(Cidr.parse("10.1.0.0/16").contains(IpLiteral.parse("10.1.255.3")))
                .isTrue();
        assertThat(Cidr.parse("10.1.0.0/16").contains(IpLiteral.parse("10.2.0.3")))
                .isFalse();
        assertThat(Cidr.parse("10.1.0.0/16").contains(IpLiteral.parse("::1"))).isFalse();
        assertThat(Cidr.parse("fd00::/8").contains(IpLiteral.parse("fdff::1"))).isTrue();
        assertThat(Cidr.parse("0.0.0.0/0").contains(IpLiteral.parse("192.0.2.1")))
                .isTrue();
        assertThat(Cidr.parse("192.0.2.128/25").contains(IpLiteral.parse("192.0.2.127")))
                .isFalse();
    }
}
