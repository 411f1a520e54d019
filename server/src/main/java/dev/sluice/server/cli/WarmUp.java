package dev.sluice.server.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * One request to the service's own HTTP port before {@code serve} says it is serving. The first request of a fresh
 * JVM loads and links the whole request path (the HTTP codec, the JSON reader and writer, the planner): measured
 * 0.6-2 s on a loaded 2-core machine, against a few milliseconds for the next one, enough for a client's first
 * call to run out of its budget (RemoteRateLimiter's is 1 s). The store is warm already (its {@code create()} made
 * a round trip along each decision path); this warms what is in front of it, with a domain no rule names, so that
 * nothing is decided or counted against anyone's limit.
 */
final class WarmUp {
    static final String DOMAIN = "sluice-warm-up";

    /** The longest the warm-up waits for its answer: it is a courtesy, never a reason not to start. */
    private static final int TIMEOUT_MILLIS = 10_000;

    private WarmUp() {}

    /** Sends the warm-up request to {@code http} (null: no HTTP) and reads the answer; failures are ignored. */
    static void http(@Nullable InetSocketAddress http, @Nullable String bearerToken) {
        if (http == null) {
            return;
        }
        InetAddress host = http.getAddress() == null || http.getAddress().isAnyLocalAddress()
                ? InetAddress.getLoopbackAddress()
                : http.getAddress();
        String body = "{\"domain\":\"" + DOMAIN + "\",\"descriptors\":[{\"entries\":[{\"key\":\"warm-up\",\"value\":"
                + "\"warm-up\"}]}]}";
        String request = "POST /v1/check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + (bearerToken != null ? "Authorization: Bearer " + bearerToken + "\r\n" : "")
                + "Content-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body;
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, http.getPort()), TIMEOUT_MILLIS);
            s.setSoTimeout(TIMEOUT_MILLIS);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            in.readAllBytes();
        } catch (IOException e) {
            // the service answers its clients all the same, only its first answer is slower
        }
    }
}
