package dev.sluice.gateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** {@code java.net.http} against the gateway's random port. */
final class Http {
    /**
     * A new client, so a new connection, for every request: on a kept-alive connection reactor-netty (1.2.18 and
     * 1.3.7 alike, the newest served here) was seen to leave the next request unread in the socket (Recv-Q) with its
     * event loop idle, a minute without an answer: reactor/reactor-netty#4361, "HTTP/1.1 keep-alive connection stops
     * reading after a queued request completes synchronously", fixed after those releases. These tests are about the
     * limiter's answers, not reactor-netty's keep-alive.
     */
    private static HttpClient client() {
        return HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    /**
     * A hang guard only, not a budget: the first request through a gateway that has just started runs its cold paths
     * (the proxy's connection pool and event loops created, classes loaded, nothing compiled yet) on one event-loop
     * thread. On a quiet machine that takes under a second; at load 12-17 on 2 cores it was seen to take 5.7-6.9 s
     * and, twice in nine runs, more than the 10 s this was before (each step of that request logged, no step waiting
     * on another). Later requests take tens of milliseconds.
     */
    static final Duration HANG_GUARD = Duration.ofSeconds(60);

    private Http() {}

    static HttpResponse<String> get(int port, String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(HANG_GUARD);
        if (headers.length > 0) {
            b.headers(headers);
        }
        try {
            return client().send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A GET as user {@code user} (the test app's key resolver reads X-User). */
    static HttpResponse<String> as(String user, int port, String path) {
        return get(port, path, "X-User", user);
    }

    /** The one value of {@code name}, or null. */
    static String header(HttpResponse<?> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }
}
