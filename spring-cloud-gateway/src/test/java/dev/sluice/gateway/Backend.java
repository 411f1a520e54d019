package dev.sluice.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The service behind the gateway: a JDK HTTP server on 127.0.0.1 and a free port that answers every request 200
 * {@code backend saw <path>} and counts the requests per path, so a test knows which ones the gateway let through.
 */
final class Backend implements AutoCloseable {
    private final HttpServer server;
    private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

    private Backend(HttpServer server) {
        this.server = server;
    }

    static Backend start() {
        try {
            HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            Backend b = new Backend(s);
            s.createContext("/", exchange -> {
                String path = exchange.getRequestURI().getPath();
                b.hits.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
                byte[] body = ("backend saw " + path).getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            s.start();
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String uri() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Requests that reached {@code path}. */
    int hits(String path) {
        AtomicInteger n = hits.get(path);
        return n == null ? 0 : n.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
