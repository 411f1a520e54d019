package dev.sluice.servlet;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.jspecify.annotations.Nullable;

/**
 * Parses IP address literals as proxies write them, and nothing else: never a host name, so that parsing a
 * header can never start a DNS lookup. Accepts {@code 192.0.2.1}, {@code 192.0.2.1:4711}, {@code 2001:db8::1},
 * {@code [2001:db8::1]}, {@code [2001:db8::1]:4711} and zone ids ({@code fe80::1%eth0}, {@code fe80::1%25eth0}).
 * The port and the zone id are dropped: a zone names an interface of the host that wrote it, not a client.
 */
final class IpLiteral {
    /** Longest text worth parsing: a bracketed IPv6 with an embedded IPv4, a port and a short zone. */
    static final int MAX_LENGTH = 64;

    private IpLiteral() {}

    /** The address, or null when {@code text} is not an IP literal (a name, {@code unknown}, garbage). */
    static @Nullable InetAddress parse(String text) {
        if (text == null) {
            return null;
        }
        String s = text.strip();
        if (s.isEmpty() || s.length() > MAX_LENGTH) {
            return null;
        }
        if (s.charAt(0) == '[') {
            int close = s.indexOf(']');
            if (close < 0 || !isPortOrNothing(s, close + 1)) {
                return null;
            }
            return ipv6(s.substring(1, close));
        }
        int firstColon = s.indexOf(':');
        if (firstColon < 0) {
            return ipv4(s);
        }
        if (s.indexOf(':', firstColon + 1) < 0) {
            // one colon: IPv4 with a port
            return isPortOrNothing(s, firstColon) ? ipv4(s.substring(0, firstColon)) : null;
        }
        return ipv6(s);
    }

    /** The canonical text of an address: dotted quad, or the full IPv6 form without a zone. */
    static String canonical(InetAddress address) {
        return address.getHostAddress();
    }

    private static boolean isPortOrNothing(String s, int from) {
        if (from == s.length()) {
            return true;
        }
        if (s.charAt(from) != ':' || from + 1 == s.length() || s.length() - from - 1 > 5) {
            return false;
        }
        for (int i = from + 1; i < s.length(); i++) {
            if (!isDigit(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static @Nullable InetAddress ipv4(String s) {
        byte[] b = new byte[4];
        int part = 0;
        int value = 0;
        int digits = 0;
        for (int i = 0; i <= s.length(); i++) {
            char c = i < s.length() ? s.charAt(i) : '.';
            if (c == '.') {
                // no empty parts, and no leading zeros: "010" is octal to some parsers and decimal to others
                if (digits == 0 || part == 4 || (digits > 1 && s.charAt(i - digits) == '0')) {
                    return null;
                }
                b[part++] = (byte) value;
                value = 0;
                digits = 0;
            } else if (isDigit(c) && digits < 3) {
                value = value * 10 + (c - '0');
                digits++;
                if (value > 255) {
                    return null;
                }
            } else {
                return null;
            }
        }
        if (part != 4) {
            return null;
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private static @Nullable InetAddress ipv6(String s) {
        int zone = s.indexOf('%');
        if (zone >= 0) {
            s = s.substring(0, zone);
        }
        if (s.indexOf(':') < 0) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.')) {
                return null;
            }
        }
        try {
            // brackets make the JDK insist on a literal: it throws rather than resolve a name
            return InetAddress.getByName("[" + s + "]");
        } catch (UnknownHostException e) {
            return null;
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
