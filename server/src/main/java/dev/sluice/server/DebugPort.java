package dev.sluice.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.server.config.DomainRules;
import dev.sluice.server.config.Rule;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * envoy's debug port ({@code DEBUG_HOST:DEBUG_PORT}, {@code sluice serve --debug}): plain text for an operator's
 * curl, as envoy's service answers there.
 * <ul>
 *   <li>{@code GET /rlconfig}: the rules in force, one line per rule as envoy's {@code Dump()} prints them
 *       ({@link #rlconfig});</li>
 *   <li>{@code GET /stats}: envoy's stats counted so far, {@code name: value} a line, under envoy's names
 *       ({@link #stats});</li>
 *   <li>{@code GET /healthcheck}: {@code OK}, or 500 while the store is unhealthy, as on the HTTP port;</li>
 *   <li>{@code GET /}: the endpoints and what they print, as envoy's debug root lists them.</li>
 * </ul>
 * envoy's pprof endpoints have no equivalent (a JVM is profiled with its own tools, e.g. {@code jcmd}). One thread
 * answers: the port is for people, not traffic; every answer is bounded by the rules' size.
 */
public final class DebugPort implements AutoCloseable {
    private static final Map<String, String> ENDPOINTS = Map.of(
            "/rlconfig", "print out the currently loaded configuration for debugging",
            "/stats", "print out stats",
            "/healthcheck", "OK while the service and its store are healthy, else 500");

    private final HttpServer http;
    private final ExecutorService thread;

    private DebugPort(HttpServer http, ExecutorService thread) {
        this.http = http;
        this.thread = thread;
    }

    /**
     * Listens on {@code address} for {@code server}'s service.
     *
     * @throws CannotListenException when the address cannot be bound
     */
    public static DebugPort start(InetSocketAddress address, DecisionService service) throws CannotListenException {
        HttpServer http;
        try {
            http = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new CannotListenException("debug", address, e);
        }
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sluice-debug-port");
            t.setDaemon(true);
            return t;
        });
        http.setExecutor(thread);
        http.createContext("/", exchange -> answer(exchange, service));
        http.start();
        return new DebugPort(http, thread);
    }

    /** The address actually bound. */
    public InetSocketAddress address() {
        return http.getAddress();
    }

    private static void answer(HttpExchange exchange, DecisionService service) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if (!exchange.getRequestMethod().equals("GET")
                    && !exchange.getRequestMethod().equals("HEAD")) {
                send(exchange, 405, "use GET\n");
                return;
            }
            switch (path) {
                case "/rlconfig" -> send(exchange, 200, rlconfig(service.rules()));
                case "/stats" -> send(exchange, 200, stats(service.metrics()));
                case "/healthcheck" -> {
                    if (service.storeReport().healthy()) {
                        send(exchange, 200, "OK");
                    } else {
                        send(exchange, 500, "");
                    }
                }
                case "/" -> {
                    StringBuilder b = new StringBuilder();
                    new TreeMap<>(ENDPOINTS)
                            .forEach(
                                    (k, v) -> b.append(k).append(": ").append(v).append('\n'));
                    send(exchange, 200, b.toString());
                }
                default -> send(exchange, 404, "404 page not found\n");
            }
        }
    }

    /**
     * The rules as envoy's {@code rateLimitConfigImpl.Dump()} prints them: for every rule,
     * {@code domain.key_value.key: unit=MINUTE requests_per_unit=20, shadow_mode: false, quota_mode: false} (the
     * unit {@code UNKNOWN} for an unlimited rule, as envoy's; Sluice's {@code window:} rules, which envoy has not,
     * print their window). Domains and rules in file order, where envoy's order is its maps'.
     */
    static String rlconfig(RuleSet rules) {
        StringBuilder b = new StringBuilder();
        for (DomainRules d : rules.domains().values()) {
            for (Rule r : d.rules()) {
                String unit = r.kind() == Rule.Kind.UNLIMITED
                        ? "UNKNOWN"
                        : r.unit() != null ? r.unit().toUpperCase(Locale.ROOT) : "UNKNOWN window=" + r.window();
                b.append(r.id())
                        .append(": unit=")
                        .append(unit)
                        .append(" requests_per_unit=")
                        .append(r.requestsPerUnit())
                        .append(", shadow_mode: ")
                        .append(r.shadowMode())
                        .append(", quota_mode: ")
                        .append(r.quotaMode())
                        .append('\n');
            }
        }
        return b.toString();
    }

    /**
     * envoy's stats as its debug port prints them, {@code name: value} a line in name order: each rule's
     * {@code ratelimit.service.rate_limit.<key>.total_hits}, {@code over_limit}, {@code near_limit},
     * {@code within_limit}, {@code shadow_mode} and the service's counters, from the same {@code EnvoyStats} that
     * statsd and {@code --prometheus} read.
     */
    static String stats(ServerMetrics metrics) {
        StringBuilder b = new StringBuilder();
        metrics.envoyStats().writeText(b);
        return b.toString();
    }

    private static void send(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head || bytes.length == 0 ? -1 : bytes.length);
        if (!head && bytes.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    @Override
    public void close() {
        http.stop(0);
        thread.shutdownNow();
    }
}
