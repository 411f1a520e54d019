package dev.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.RuleSet;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.UnaryOperator;

/** A real server on loopback ephemeral ports, its memory store on a manual clock, and an HTTP client for it. */
final class TestServer implements AutoCloseable {
    /** 2026-01-01T00:00:00Z: a multiple of every window the tests use (1 s, 1 min, 90 s, 1 h, 1 d). */
    static final long T0 = 1_767_225_600L * 1_000_000_000L;

    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    final SluiceServer server;
    final String base;

    static TestServer start(String... resources) {
        return start(UnaryOperator.identity(), resources);
    }

    static TestServer start(UnaryOperator<SluiceServer.Settings> tweak, String... resources) {
        StringBuilder yaml = new StringBuilder();
        for (String r : resources) {
            yaml.append(resource(r)).append("\n---\n");
        }
        try {
            RuleSet rules = RuleSet.parse("test", yaml.toString());
            return new Holder(rules, tweak).start();
        } catch (ConfigException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Starts with a given store instead of a memory store on the manual clock. */
    static TestServer startWith(RateLimiter limiter, UnaryOperator<SluiceServer.Settings> tweak, String... resources) {
        return start(s -> tweak.apply(s.withStore(limiter, "test", s.storeTimeout())), resources);
    }

    private record Holder(RuleSet rules, UnaryOperator<SluiceServer.Settings> tweak) {
        TestServer start() {
            ManualTicker ticker = ManualTicker.atEpochNanos(T0);
            RateLimiter limiter = InMemoryRateLimiter.builder().ticker(ticker).build();
            SluiceServer.Settings s = tweak.apply(SluiceServer.Settings.defaults(limiter, rules));
            try {
                return new TestServer(SluiceServer.start(s), ticker);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private final ManualTicker clock;

    private TestServer(SluiceServer server, ManualTicker clock) {
        this.server = server;
        this.base = "http://127.0.0.1:" + server.httpAddress().getPort();
        this.clock = clock;
    }

    ManualTicker clock() {
        return clock;
    }

    static String resource(String name) {
        try (InputStream in = TestServer.class.getResourceAsStream("/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    record Resp(int status, HttpHeaders headers, String body) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        String header(String name) {
            return headers.firstValue(name).orElse(null);
        }

        JsonNode status(int i) {
            return json().get("statuses").get(i);
        }
    }

    Resp post(String json, String... headers) {
        return postTo("/v1/check", json, headers);
    }

    /** POSTs JSON to another path of the API ({@code /v1/settle}, {@code /v1/in-flight/acquire}, …). */
    Resp postTo(String path, String json, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return send(b.build());
    }

    Resp get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(10))
                .GET()
                .build());
    }

    static Resp send(HttpRequest r) {
        try {
            HttpResponse<String> resp = CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
            return new Resp(resp.statusCode(), resp.headers(), resp.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A check body: {@code check("api", 1, "k=v,k2=v2", "k3=v3")} — one descriptor per string, entries by comma.
     * Pass hits &lt; 0 to leave hits out.
     */
    static String check(String domain, long hits, String... descriptors) {
        StringBuilder sb = new StringBuilder("{\"domain\":\"").append(domain).append('"');
        if (hits >= 0) {
            sb.append(",\"hits\":").append(hits);
        }
        sb.append(",\"descriptors\":[");
        for (int i = 0; i < descriptors.length; i++) {
            sb.append(i == 0 ? "" : ",").append("{\"entries\":[");
            String[] kvs = descriptors[i].split(",", -1);
            for (int j = 0; j < kvs.length; j++) {
                String[] kv = kvs[j].split("=", 2);
                sb.append(j == 0 ? "" : ",")
                        .append("{\"key\":\"")
                        .append(kv[0])
                        .append("\",\"value\":\"")
                        .append(kv.length > 1 ? kv[1] : "")
                        .append("\"}");
            }
            sb.append("]}");
        }
        return sb.append("]}").toString();
    }

    Resp check(String domain, String... descriptors) {
        return post(check(domain, -1, descriptors));
    }

    @Override
    public void close() {
        server.close();
    }
}
