package dev.sluice.server.stats;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@link EnvoyStats} in Prometheus' text format, named as envoy's service names them when {@code USE_PROMETHEUS} is
 * set: its Prometheus sink feeds each stat to statsd_exporter's mapper with envoy's {@code default_mapper.yaml}, so
 * <ul>
 *   <li>{@code ratelimit.service.rate_limit.<domain>.<key1>[.<key2>…].<stat>} becomes
 *       {@code ratelimit_service_rate_limit_<stat>{domain, key1[, key2]}} (levels past the second are not labelled:
 *       their counts add up in the second's series);</li>
 *   <li>{@code ratelimit.service.call.should_rate_limit.<err>} becomes
 *       {@code ratelimit_service_should_rate_limit_error{err_type}};</li>
 *   <li>{@code ratelimit.service.config_load_success} and {@code _error} become
 *       {@code ratelimit_service_config_load_success} and {@code _error};</li>
 *   <li>anything else keeps its name with each character Prometheus does not allow made {@code _}.</li>
 * </ul>
 * A counter appears once it has counted something (statsd_exporter sees only what is flushed).
 *
 * <p>{@link #listen} serves it on an address of its own ({@code sluice serve --prometheus}, envoy's
 * {@code PROMETHEUS_ADDR} and {@code PROMETHEUS_PATH}), beside the service's own {@code /metrics} ({@code sluice_*}),
 * which stays as it is.
 */
public final class EnvoyPrometheus implements AutoCloseable {
    private static final Set<String> RATE_LIMIT_STATS =
            Set.of("near_limit", "over_limit", "total_hits", "within_limit", "shadow_mode");
    private static final String CALL_PREFIX = "ratelimit.service.call.should_rate_limit.";

    private final HttpServer server;
    private final ExecutorService thread;
    private final String path;

    private EnvoyPrometheus(HttpServer server, ExecutorService thread, String path) {
        this.server = server;
        this.thread = thread;
        this.path = path;
    }

    /**
     * Serves the exposition at {@code path} of {@code address} (GET or HEAD; any other path is 404) on one daemon
     * thread, {@code sluice-prometheus}.
     *
     * @throws IOException when the address cannot be bound
     */
    public static EnvoyPrometheus listen(EnvoyStats stats, InetSocketAddress address, String path) throws IOException {
        HttpServer server = HttpServer.create(address, 16);
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "sluice-prometheus");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(thread);
        server.createContext("/", exchange -> answer(exchange, stats, path));
        server.start();
        return new EnvoyPrometheus(server, thread, path);
    }

    private static void answer(HttpExchange exchange, EnvoyStats stats, String path) throws IOException {
        try (exchange) {
            String method = exchange.getRequestMethod();
            boolean head = "HEAD".equals(method);
            byte[] body;
            int status;
            if (!exchange.getRequestURI().getPath().equals(path)) {
                status = 404;
                body = ("not found: the stats are at " + path + "\n").getBytes(StandardCharsets.UTF_8);
            } else if (!head && !"GET".equals(method)) {
                status = 405;
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                body = new byte[0];
            } else {
                status = 200;
                exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                body = scrape(stats).getBytes(StandardCharsets.UTF_8);
            }
            exchange.sendResponseHeaders(status, head || body.length == 0 ? -1 : body.length);
            if (!head && body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    /** The address bound (its port chosen by the system when 0 was asked for). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** The path served. */
    public String path() {
        return path;
    }

    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }

    /** The text exposition of every counter that has counted something, under envoy's Prometheus names. */
    public static String scrape(EnvoyStats stats) {
        // family name -> (labels as written -> value)
        Map<String, Map<String, Long>> families = new TreeMap<>();
        for (EnvoyStats.Counter c : stats.counters()) {
            long v = c.total.sum();
            if (v == 0) {
                continue;
            }
            String[] series = mapped(c.name);
            families.computeIfAbsent(series[0], f -> new TreeMap<>()).merge(series[1], v, Long::sum);
        }
        StringBuilder out = new StringBuilder();
        families.forEach((family, byLabels) -> {
            out.append("# HELP ").append(family).append(" Metric autogenerated by statsd_exporter.\n");
            out.append("# TYPE ").append(family).append(" counter\n");
            byLabels.forEach((labels, v) ->
                    out.append(family).append(labels).append(' ').append(v).append('\n'));
        });
        return out.toString();
    }

    /** A statsd name's family and labels ({@code {a="b",…}} or empty), by envoy's default mapper. */
    static String[] mapped(String name) {
        if (name.startsWith(EnvoyStats.RATE_LIMIT_PREFIX)) {
            int dot = name.lastIndexOf('.');
            String stat = name.substring(dot + 1);
            String[] parts = name.substring(EnvoyStats.RATE_LIMIT_PREFIX.length(), Math.max(dot, 0))
                    .split("\\.", -1);
            if (RATE_LIMIT_STATS.contains(stat) && parts.length >= 2) {
                List<String> names = parts.length == 2 ? List.of("domain", "key1") : List.of("domain", "key1", "key2");
                StringBuilder labels = new StringBuilder("{");
                for (int i = 0; i < names.size(); i++) {
                    label(labels.append(i == 0 ? "" : ","), names.get(i), parts[i]);
                }
                return new String[] {
                    "ratelimit_service_rate_limit_" + stat, labels.append('}').toString()
                };
            }
        } else if (name.startsWith(CALL_PREFIX)) {
            String err = name.substring(CALL_PREFIX.length());
            return new String[] {
                "ratelimit_service_should_rate_limit_error", label(new StringBuilder("{"), "err_type", err) + "}"
            };
        }
        return new String[] {escape(name), ""};
    }

    private static StringBuilder label(StringBuilder out, String name, String value) {
        out.append(name).append("=\"");
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            switch (ch) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                default -> out.append(ch);
            }
        }
        return out.append('"');
    }

    /** statsd_exporter's {@code EscapeMetricName}: every character but {@code [a-zA-Z0-9_]} becomes {@code _}. */
    static String escape(String name) {
        StringBuilder sb = new StringBuilder(name.length() + 1);
        if (!name.isEmpty() && Character.isDigit(name.charAt(0))) {
            sb.append('_');
        }
        for (int i = 0; i < name.length(); i++) {
            char ch = name.charAt(i);
            boolean ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
            sb.append(ok ? ch : '_');
        }
        return sb.toString();
    }
}
