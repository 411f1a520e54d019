package dev.sluice.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Finds the address of the client behind the proxies you trust, so that a client cannot choose its own key.
 *
 * <p>The peer address of the connection is the only fact no client can forge. When that peer is a trusted proxy
 * (an address inside one of the configured blocks), the forwarding header the proxies write is read from the
 * <em>right</em>: each proxy appends the address it received the request from, so the rightmost entries were
 * written by the proxies nearest to us. The first address that is not a trusted proxy is the client; everything
 * to its left was written by that client (or by proxies it controls) and is ignored. With no trusted proxies the
 * headers are never read.
 *
 * <p>Only one header is honoured, the one your proxies write: {@link Header#X_FORWARDED_FOR} (the default, what
 * most proxies and load balancers append) or {@link Header#FORWARDED} (RFC 7239 {@code for=}). Reading both would
 * let a client send the other one through a proxy that passes it untouched.
 *
 * <p>Bad input never throws and never resolves a name. An entry that is not an IP literal ({@code unknown}, an
 * obfuscated {@code _hidden} identifier, garbage) stops the walk: the client is the trusted proxy that wrote it,
 * the nearest address known. Ports and IPv6 zone ids are dropped; IPv6 addresses are keyed in their full
 * canonical form, so {@code [2001:db8::1]:443} and {@code 2001:DB8:0::1} are one client. At most
 * {@value #MAX_HOPS} entries are examined; a longer chain of trusted proxies ends at the last one examined.
 */
public final class ClientIpResolver {
    /** The most forwarding entries examined from the right. */
    public static final int MAX_HOPS = 32;

    /** Which forwarding header the trusted proxies write. */
    public enum Header {
        /** {@code X-Forwarded-For: client, proxy1, proxy2}. */
        X_FORWARDED_FOR("X-Forwarded-For"),
        /** RFC 7239 {@code Forwarded: for=client;proto=https, for="[2001:db8::1]:4711"}. */
        FORWARDED("Forwarded");

        private final String headerName;

        Header(String headerName) {
            this.headerName = headerName;
        }

        /** The HTTP header name. */
        public String headerName() {
            return headerName;
        }
    }

    private static final ClientIpResolver PEER_ONLY = new ClientIpResolver(List.of(), Header.X_FORWARDED_FOR);

    private final List<Cidr> trusted;
    private final Header header;

    private ClientIpResolver(List<Cidr> trusted, Header header) {
        this.trusted = List.copyOf(trusted);
        this.header = Objects.requireNonNull(header, "header");
    }

    /** The connection's peer address, whatever the headers say. */
    public static ClientIpResolver peerOnly() {
        return PEER_ONLY;
    }

    /**
     * Honours {@code header} when it comes from a peer inside one of {@code trustedProxies}.
     *
     * @param trustedProxies blocks such as {@code 10.0.0.0/8}, {@code 192.0.2.7}, {@code fd00::/8}
     * @throws IllegalArgumentException naming a block that does not parse
     */
    public static ClientIpResolver trusting(Header header, List<String> trustedProxies) {
        List<Cidr> blocks = new ArrayList<>();
        for (String s : trustedProxies) {
            blocks.add(Cidr.parse(s));
        }
        return new ClientIpResolver(blocks, header);
    }

    /** The client address of {@code request}. */
    public String resolve(HttpServletRequest request) {
        String peer = request.getRemoteAddr();
        if (trusted.isEmpty()) {
            // the container spells the peer from an InetAddress already: only a zone id needs dropping
            return peer != null && !peer.isEmpty() && peer.indexOf('%') < 0 && peer.length() <= IpLiteral.MAX_LENGTH
                    ? peer
                    : canonicalPeer(peer);
        }
        return resolve(peer, Collections.list(request.getHeaders(header.headerName())));
    }

    /**
     * The client address given the connection's peer and the values of the forwarding header, in the order they
     * arrived (one per header line).
     */
    public String resolve(String peer, List<String> headerValues) {
        InetAddress current = IpLiteral.parse(peer);
        if (current == null) {
            return canonicalPeer(peer);
        }
        if (!isTrusted(current) || headerValues.isEmpty()) {
            return IpLiteral.canonical(current);
        }
        List<String> hops = header == Header.FORWARDED ? forwardedFor(headerValues) : commaSeparated(headerValues);
        int examined = 0;
        for (int i = hops.size() - 1; i >= 0 && examined < MAX_HOPS; i--, examined++) {
            InetAddress hop = IpLiteral.parse(hops.get(i));
            if (hop == null) {
                break; // not an address: the proxy that wrote it is the nearest client we know
            }
            current = hop;
            if (!isTrusted(hop)) {
                break;
            }
        }
        return IpLiteral.canonical(current);
    }

    /** The trusted blocks, as configured. */
    public List<Cidr> trustedProxies() {
        return trusted;
    }

    /** The header honoured from trusted proxies. */
    public Header header() {
        return header;
    }

    private boolean isTrusted(InetAddress address) {
        for (Cidr c : trusted) {
            if (c.contains(address)) {
                return true;
            }
        }
        return false;
    }

    /** A peer that is not an IP literal (a Unix socket, a test double) is used as it is, bounded. */
    private static String canonicalPeer(String peer) {
        InetAddress a = IpLiteral.parse(peer);
        if (a != null) {
            return IpLiteral.canonical(a);
        }
        return peer == null || peer.isEmpty() ? "unknown" : peer.length() > 64 ? peer.substring(0, 64) : peer;
    }

    private static List<String> commaSeparated(List<String> values) {
        List<String> out = new ArrayList<>();
        for (String v : values) {
            int start = 0;
            for (int i = 0; i <= v.length(); i++) {
                if (i == v.length() || v.charAt(i) == ',') {
                    out.add(v.substring(start, i));
                    start = i + 1;
                }
            }
        }
        return out;
    }

    /**
     * The {@code for=} value of each element of RFC 7239 {@code Forwarded} values, in order; an element without
     * one, or one that does not parse, yields an empty string (not an address), which stops the walk there.
     */
    static List<String> forwardedFor(List<String> values) {
        List<String> out = new ArrayList<>();
        for (String v : values) {
            String found = null;
            boolean broken = false;
            int i = 0;
            int n = v.length();
            while (i <= n) {
                // one pair: token "=" ( token / quoted-string ), then ';' (next pair) or ',' (next element)
                int eq = i;
                while (eq < n && v.charAt(eq) != '=' && v.charAt(eq) != ',' && v.charAt(eq) != ';') {
                    eq++;
                }
                String name = v.substring(i, eq).strip();
                String value = null;
                int j = eq;
                if (eq < n && v.charAt(eq) == '=') {
                    j = eq + 1;
                    while (j < n && v.charAt(j) == ' ') {
                        j++;
                    }
                    if (j < n && v.charAt(j) == '"') {
                        StringBuilder sb = new StringBuilder();
                        j++;
                        while (j < n && v.charAt(j) != '"') {
                            if (v.charAt(j) == '\\' && j + 1 < n) {
                                j++;
                            }
                            sb.append(v.charAt(j++));
                        }
                        if (j >= n) {
                            broken = true; // unterminated quote
                        }
                        j++;
                        value = sb.toString();
                    } else {
                        int start = j;
                        while (j < n && v.charAt(j) != ';' && v.charAt(j) != ',') {
                            j++;
                        }
                        value = v.substring(start, j).strip();
                    }
                    while (j < n && v.charAt(j) == ' ') {
                        j++;
                    }
                } else if (!name.isEmpty()) {
                    broken = true; // a pair without '='
                }
                if (value != null && name.equalsIgnoreCase("for")) {
                    found = found == null ? value : ""; // two for= in one element: ambiguous
                }
                if (j >= n || v.charAt(j) == ',') {
                    out.add(broken || found == null ? "" : found);
                    found = null;
                    broken = false;
                    if (j >= n) {
                        break;
                    }
                } else if (v.charAt(j) != ';') {
                    broken = true; // junk after a value
                    while (j < n && v.charAt(j) != ';' && v.charAt(j) != ',') {
                        j++;
                    }
                    if (j >= n) {
                        out.add("");
                        break;
                    }
                    if (v.charAt(j) == ',') {
                        out.add("");
                        found = null;
                        broken = false;
                    }
                }
                i = j + 1;
            }
        }
        return out;
    }
}
