package dev.sluice.example.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The service behind the gateway, so that the example runs alone: a JDK HTTP server on 127.0.0.1:8093
 * ({@code example.backend.port}) answering every path with a line of JSON and counting what reached it.
 * {@code example.backend.enabled=false} leaves it out (point {@code BACKEND_URI} at a service of yours).
 */
@Component
@ConditionalOnProperty(prefix = "example.backend", name = "enabled", havingValue = "true", matchIfMissing = true)
public class DemoBackend implements SmartLifecycle, DisposableBean {
    private final int port;
    private final AtomicLong served = new AtomicLong();
    /** Null while stopped. */
    private @Nullable HttpServer server;

    public DemoBackend(@Value("${example.backend.port:8093}") int port) {
        this.port = port;
    }

    @Override
    public synchronized void start() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "the demo backend cannot listen on 127.0.0.1:" + port
                            + ": set example.backend.port, or example.backend.enabled=false and BACKEND_URI",
                    e);
        }
        server.createContext("/", exchange -> {
            long n = served.incrementAndGet();
            byte[] body = ("{\"path\":\"" + exchange.getRequestURI().getPath() + "\",\"served\":" + n + "}\n")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    @Override
    public synchronized void stop() {
        if (server != null) {
            server.stop(0);
            server = null;
        }
    }

    /** Stops it when startup fails after it started (a failed refresh destroys beans without stopping them). */
    @Override
    public void destroy() {
        stop();
    }

    @Override
    public synchronized boolean isRunning() {
        return server != null;
    }

    /** Requests that reached the backend: the ones the gateway let through. */
    public long served() {
        return served.get();
    }

    /** Where it listens (the actual port when example.backend.port is 0). */
    public synchronized int port() {
        return server == null ? port : server.getAddress().getPort();
    }
}
