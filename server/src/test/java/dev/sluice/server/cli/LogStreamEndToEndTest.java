package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.redis.RedisServer;
import dev.sluice.server.log.Logfmt;
import dev.sluice.tck.Eventually;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice serve} as a separate JVM over a real redis-server that is killed and started again, with its rules
 * changed twice (once valid, once not), then stopped by SIGTERM: every line it wrote on stderr parses as logfmt (as
 * JSON with {@code --log-format json}), and the lines of every source went through that one format — Sluice's own
 * events, sluice-core's {@code System.Logger} lines, grpc-java's java.util.logging records, Netty's and Lettuce's
 * slf4j lines. grpc-java and Netty are asked for debug lines ({@code --log-level}) so that each source certainly
 * writes some; the banner goes to stdout, and only there.
 */
class LogStreamEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    /** A hang guard for each step that waits on the service (a JVM start, a reconnect, a reload), not a budget. */
    private static final Duration GUARD = Duration.ofSeconds(90);

    private static final String RULES = """
            domain: logs
            descriptors:
              - key: user
                rate_limit:
                  unit: minute
                  requests_per_unit: %d
            """;

    @TempDir
    Path dir;

    @Test
    void everyStderrLineOfAnOutageAndTwoReloadsIsLogfmt() throws Exception {
        List<String> lines = serveThroughAnOutageAndTwoReloads("logfmt");
        List<Map<String, String>> events = new ArrayList<>();
        for (String line : lines) {
            events.add(Logfmt.parse(line)); // throws, naming the line, at the first that is not logfmt
        }
        assertTheWholeStory(events);
    }

    @Test
    void everyStderrLineIsAJsonObjectWithLogFormatJson() throws Exception {
        List<String> lines = serveThroughAnOutageAndTwoReloads("json");
        List<Map<String, String>> events = new ArrayList<>();
        for (String line : lines) {
            JsonNode node;
            try {
                node = JSON.readTree(line);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + line, e);
            }
            assertThat(node.isObject()).as(line).isTrue();
            events.add(fields(node));
        }
        assertTheWholeStory(events);
    }

    /** What each source must have written, in whichever format. */
    private static void assertTheWholeStory(List<Map<String, String>> events) {
        for (Map<String, String> e : events) {
            assertThat(List.copyOf(e.keySet()).subList(0, 3))
                    .as("fixed leading keys of %s", e)
                    .containsExactly("time", "level", "logger");
            assertThat(Instant.parse(e.get("time"))).isNotNull();
            assertThat(e.get("level")).isIn("TRACE", "DEBUG", "INFO", "WARN", "ERROR");
        }
        Map<String, String> started = only(events, e -> "started".equals(e.get("event")));
        assertThat(started)
                .containsEntry("logger", "dev.sluice.server.cli.ServeCommand")
                .containsEntry("store", "redis")
                .containsEntry("store_budget", "1s")
                .containsEntry("failure_policy", "fail_open");
        assertThat(started.get("http")).matches("127\\.0\\.0\\.1:\\d+");
        assertThat(started.get("grpc")).matches("127\\.0\\.0\\.1:\\d+");
        assertThat(started.get("http_transport")).isIn("io_uring", "epoll", "nio");
        assertThat(events)
                .as("Lettuce kept on epoll beside the HTTP endpoint's io_uring, without a warning per client")
                .noneMatch(e -> "io.lettuce.core.resource.Transports".equals(e.get("logger")));
        assertThat(any(events, e -> "rules_reloaded".equals(e.get("event"))).get("rules"))
                .isEqualTo("1");
        assertThat(any(events, e -> "rules_reload_refused".equals(e.get("event")))
                        .get("problems"))
                .contains("rules.yaml:")
                .contains("not valid YAML");
        any(events, e -> "shutdown_finished".equals(e.get("event")));
        // sluice-core has no dependency: its failure-policy lines are System.Logger's, with a plain message
        assertThat(any(events, e -> e.get("logger").startsWith("dev.sluice.failsafe."))
                        .get("msg"))
                .isNotBlank();
        // grpc-java's own code logs through java.util.logging only; its shaded Netty through slf4j
        String shadedNetty = "io.grpc.netty.shaded.io.netty.";
        any(
                events,
                e -> e.get("logger").startsWith("io.grpc.") && !e.get("logger").startsWith(shadedNetty));
        any(events, e -> e.get("logger").startsWith(shadedNetty));
        any(events, e -> e.get("logger").startsWith("io.netty."));
        assertThat(any(events, e -> e.get("logger").startsWith("io.lettuce.")).get("msg"))
                .isNotBlank();
    }

    private List<String> serveThroughAnOutageAndTwoReloads(String format) throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, RULES.formatted(3), StandardCharsets.UTF_8);
        Path stderr = dir.resolve("stderr.log");
        Path stdout = dir.resolve("stdout.log");
        try (RedisServer redis = RedisServer.start()) {
            Process serve = new ProcessBuilder(
                            javaBin(),
                            "-Xmx128m",
                            "-cp",
                            System.getProperty("java.class.path"),
                            SluiceCommand.class.getName(),
                            "serve",
                            "--store",
                            redis.uri(),
                            "--store-timeout",
                            "1s",
                            "--config",
                            rules.toString(),
                            "--reload-interval",
                            "100ms",
                            "--http",
                            "127.0.0.1:0", // ports of its own: ones chosen here could be taken before it binds
                            "--grpc",
                            "127.0.0.1:0",
                            "--log-format",
                            format,
                            "--log-level",
                            "io.grpc=debug",
                            "--log-level",
                            "io.netty=debug",
                            "--log-level",
                            "io.lettuce.core.protocol.ConnectionWatchdog=info",
                            "--log-level",
                            "io.lettuce.core.protocol.ReconnectionHandler=info")
                    .redirectError(stderr.toFile())
                    .redirectOutput(stdout.toFile())
                    .start();
            try {
                String base = ServedAt.http(stdout, serve, GUARD);
                await("ready", () -> status(base + "/readyz") == 200, serve);
                redis.kill();
                await("a degraded answer while Redis is down", () -> degraded(base), serve);
                await(
                        "sluice-core's line that the store is failing (the circuit opens after a few failures)",
                        () -> degraded(base) && Files.readString(stderr).contains("dev.sluice.failsafe."),
                        serve);
                redis.restart();
                await("Redis's answer again", () -> !degraded(base), serve);
                Files.writeString(rules, RULES.formatted(5), StandardCharsets.UTF_8);
                await("the valid change applied", () -> Files.readString(stderr).contains("rules_reloaded"), serve);
                Files.writeString(rules, RULES.formatted(5) + "  - key: [\n", StandardCharsets.UTF_8);
                await(
                        "the invalid change refused",
                        () -> Files.readString(stderr).contains("rules_reload_refused"),
                        serve);
            } finally {
                serve.destroy(); // SIGTERM: the graceful shutdown logs too
                if (!serve.waitFor(GUARD.toSeconds(), TimeUnit.SECONDS)) {
                    serve.destroyForcibly().waitFor(GUARD.toSeconds(), TimeUnit.SECONDS);
                }
            }
        }
        assertThat(Files.readString(stdout))
                .as("the banner, for people, on stdout")
                .contains("sluice is serving")
                .doesNotContain("time=")
                .doesNotContain("\"time\"");
        List<String> lines = Files.readAllLines(stderr, StandardCharsets.UTF_8);
        assertThat(lines).as("stderr").isNotEmpty();
        return lines;
    }

    private static Map<String, String> fields(JsonNode node) {
        Map<String, String> out = new LinkedHashMap<>();
        node.properties()
                .forEach(f -> out.put(
                        f.getKey(),
                        f.getValue().isArray()
                                ? StreamSupport.stream(f.getValue().spliterator(), false)
                                        .map(JsonNode::asText)
                                        .collect(Collectors.joining(","))
                                : f.getValue().asText()));
        return out;
    }

    private static Map<String, String> any(List<Map<String, String>> events, Predicate<Map<String, String>> which) {
        return events.stream()
                .filter(which)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no such line among " + events.size() + ", whose loggers and "
                        + "events are "
                        + events.stream()
                                .map(e -> e.get("logger") + " " + e.getOrDefault("event", ""))
                                .distinct()
                                .toList()));
    }

    private static Map<String, String> only(List<Map<String, String>> events, Predicate<Map<String, String>> which) {
        List<Map<String, String>> found = events.stream().filter(which).toList();
        assertThat(found).hasSize(1);
        return found.get(0);
    }

    private static boolean degraded(String base) throws IOException, InterruptedException {
        String body = "{\"domain\":\"logs\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"u"
                + System.nanoTime() + "\"}]}]}";
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                        .timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.headers().firstValue("Sluice-Degraded").isPresent();
    }

    private static int status(String url) throws InterruptedException {
        try {
            return HTTP.send(
                            HttpRequest.newBuilder(URI.create(url))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException notListeningYet) {
            return -1;
        }
    }

    private interface Condition {
        boolean holds() throws Exception;
    }

    /** Polls {@code condition} until it holds; fails if the service exits or {@link #GUARD} passes first. */
    private static void await(String what, Condition condition, Process serve) {
        Eventually.await(GUARD, what, () -> {
            if (condition.holds()) {
                return true;
            }
            assertThat(serve.isAlive())
                    .as("sluice serve exited while waiting for " + what)
                    .isTrue();
            return false;
        });
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
