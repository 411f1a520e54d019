package dev.sluice.store;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * What speaks at an address, asked by a store whose client failed at startup in a way that does not say why: the
 * server closed the connection during the handshake, reset it, or never answered it. A Redis client pointed at
 * PostgreSQL's port sees exactly what it sees behind a proxy whose backend is down (a closed connection), and one
 * speaking TLS to a plain Redis sees what it sees on a frozen one (no answer); only asking the server in its own
 * words tells a misconfiguration from an outage. Used by the stores to name the mistake (and to fail startup at
 * once rather than wait for a server that will never answer); applications do not need it.
 *
 * <p>Three short questions, each on a connection of its own with {@code timeout} to connect and to answer, and
 * nothing of value in any of them: PostgreSQL's {@code SSLRequest} (a PostgreSQL server answers {@code S} or
 * {@code N}), an inline {@code PING} (Redis answers {@code +PONG} or an error such as {@code -NOAUTH}; an HTTP
 * server answers {@code HTTP/1.x 400}; a TLS server a TLS alert), then a TLS handshake that trusts any certificate
 * (only to learn whether the port speaks TLS; nothing is sent over it but {@code PING}).
 */
public final class ServerProbe {

    /** What answered. */
    public enum Speaks {
        /** Redis in plain text ({@code redis://}). */
        REDIS("a Redis server (plain text, redis://)"),
        /** Redis over TLS ({@code rediss://}). */
        REDIS_TLS("a Redis server that speaks only TLS (rediss://)"),
        /** A PostgreSQL server (it answers the SSL negotiation every PostgreSQL client starts with). */
        POSTGRESQL("a PostgreSQL server"),
        /** An HTTP server. */
        HTTP("an HTTP server"),
        /** A TLS server that is neither Redis nor PostgreSQL as far as it said. */
        TLS("a server that speaks only TLS"),
        /** Something accepted the connection but said nothing recognizable, or nothing at all within the timeout. */
        UNKNOWN("nothing recognizable"),
        /** No connection: refused, unreachable, or the name does not resolve. */
        NO_CONNECTION("nothing (no connection)");

        private final String description;

        Speaks(String description) {
            this.description = description;
        }

        /** In words, for a message: "a PostgreSQL server". */
        public String description() {
            return description;
        }
    }

    /** PostgreSQL's SSLRequest: length 8, then the code 80877103. */
    private static final byte[] SSL_REQUEST = {0, 0, 0, 8, 4, (byte) 0xd2, 0x16, 0x2f};

    private static final byte[] PING = "PING\r\n".getBytes(StandardCharsets.US_ASCII);
    /** A TLS record of type alert (21) with a TLS version byte 3: what a TLS server answers to plain text. */
    private static final int TLS_ALERT = 0x15;

    private ServerProbe() {}

    /** Asks what speaks at {@code host:port}, waiting at most {@code timeout} for each of its three questions. */
    public static Speaks identify(String host, int port, Duration timeout) {
        int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
        byte[] pg;
        try {
            pg = ask(host, port, SSL_REQUEST, millis);
        } catch (IOException e) {
            return Speaks.NO_CONNECTION;
        }
        Speaks first = recognize(pg, true);
        if (first != Speaks.UNKNOWN) {
            return first;
        }
        byte[] ping;
        try {
            ping = ask(host, port, PING, millis);
        } catch (IOException e) {
            return Speaks.NO_CONNECTION;
        }
        Speaks second = recognize(ping, false);
        if (second != Speaks.UNKNOWN) {
            return second;
        }
        return overTls(host, port, millis);
    }

    /** What a reply says: the first bytes of PostgreSQL's, Redis's, an HTTP server's or a TLS server's answer. */
    static Speaks recognize(byte[] reply, boolean toSslRequest) {
        if (reply.length == 0) {
            return Speaks.UNKNOWN;
        }
        int b = reply[0] & 0xff;
        if (toSslRequest && reply.length == 1 && (b == 'S' || b == 'N')) {
            return Speaks.POSTGRESQL;
        }
        if (b == TLS_ALERT && reply.length >= 2 && reply[1] == 3) {
            return Speaks.TLS;
        }
        String text = new String(reply, 0, Math.min(reply.length, 16), StandardCharsets.US_ASCII);
        if (text.startsWith("HTTP/")) {
            return Speaks.HTTP;
        }
        if (!toSslRequest && (b == '+' || b == '-')) {
            return Speaks.REDIS;
        }
        return Speaks.UNKNOWN;
    }

    /** Sends {@code question} and returns what came back before the server closed or went quiet (maybe nothing). */
    private static byte[] ask(String host, int port, byte[] question, int millis) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), millis);
            s.setSoTimeout(millis);
            s.getOutputStream().write(question);
            s.getOutputStream().flush();
            return readSome(s.getInputStream());
        }
    }

    private static byte[] readSome(InputStream in) {
        byte[] buf = new byte[64];
        int n = 0;
        try {
            int r = in.read(buf);
            n = Math.max(0, r);
        } catch (SocketTimeoutException e) {
            // silent: nothing recognizable
        } catch (IOException e) {
            // reset: nothing read
        }
        return Arrays.copyOf(buf, n);
    }

    /** {@code TLS} or {@code REDIS_TLS} when a TLS handshake succeeds, else {@code UNKNOWN}. */
    private static Speaks overTls(String host, int port, int millis) {
        try (Socket plain = new Socket()) {
            plain.connect(new InetSocketAddress(host, port), millis);
            plain.setSoTimeout(millis);
            SSLSocket socket = (SSLSocket) trustingAnyone().getSocketFactory().createSocket(plain, host, port, true);
            try (SSLSocket tls = socket) {
                tls.startHandshake();
                tls.getOutputStream().write(PING);
                tls.getOutputStream().flush();
                return recognize(readSome(tls.getInputStream()), false) == Speaks.REDIS ? Speaks.REDIS_TLS : Speaks.TLS;
            }
        } catch (IOException | GeneralSecurityException e) {
            return Speaks.UNKNOWN;
        }
    }

    /** Only to learn whether a port speaks TLS: nothing is trusted to it but {@code PING}. */
    private static SSLContext trustingAnyone() throws GeneralSecurityException {
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(
                null,
                new TrustManager[] {
                    new X509TrustManager() {
                        @Override
                        public void checkClientTrusted(X509Certificate[] chain, String authType) {
                            // not asked: this side is the client
                        }

                        @Override
                        public void checkServerTrusted(X509Certificate[] chain, String authType) {
                            // any: the probe only asks whether the port speaks TLS
                        }

                        @Override
                        public X509Certificate[] getAcceptedIssuers() {
                            return new X509Certificate[0];
                        }
                    }
                },
                null);
        return c;
    }
}
