package dev.sluice.server.cli;

import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;

/** {@code host:port}, {@code :port} or {@code port} (loopback), or {@code off}. */
final class Addresses {
    private Addresses() {}

    static @Nullable InetSocketAddress parse(String what, @Nullable String s) {
        if (s == null || s.equalsIgnoreCase("off") || s.equalsIgnoreCase("none")) {
            return null;
        }
        String host = "127.0.0.1";
        String port = s;
        int colon = s.lastIndexOf(':');
        if (colon >= 0) {
            host = colon == 0 ? host : s.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            port = s.substring(colon + 1);
        }
        try {
            if (!port.matches("[0-9]{1,5}")) { // Integer.parseInt would also read other scripts' digits
                throw new NumberFormatException();
            }
            int p = Integer.parseInt(port);
            if (p > 65535) {
                throw new NumberFormatException();
            }
            return new InetSocketAddress(host, p);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " '" + s + "' is not an address: write host:port, e.g. "
                    + "127.0.0.1:8080 or 0.0.0.0:8080, or 'off'");
        }
    }
}
