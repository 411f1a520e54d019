package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisServer;
import dev.sluice.tck.Eventually;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three separate {@code sluice serve --leases} JVM processes in front of one real redis-server, then of one real
 * PostgreSQL, hit on two hot keys (a token bucket and a fixed window) from many threads at once: the fleet admits
 * <b>never more</b> than one shared limiter allows, and leases really decide locally (far fewer store calls than
 * decisions). The limits refill at most a few permits during the run; the bound counts those from the wall time around
 * the whole run, which is at least the store's time between the first and the last decision.
 */
class FleetLeasesTest {
    private static final int NODES = 3;
    private static final int BUCKET = 600; // token bucket: 600 an hour, 1 permit back every 6 s
    private static final int WINDOW = 400; // fixed window: 400 an hour
    private static final int REQUESTS = 2_000; // per key, spread over the nodes
    private static final long LEASE = 64; // --leases=64: each node holds at most 64 of a key
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private static final String RULES = """
            domain: fleet
            descriptors:
              - key: tenant
                rate_limit:
                  algorithm: token_bucket
                  unit: hour
                  requests_per_unit: %d
              - key: api
                rate_limit:
                  algorithm: fixed_window
                  unit: hour
                  requests_per_unit: %d
            """.formatted(BUCKET, WINDOW);

    @TempDir
    Path dir;

    @Test
    void threeJvmsOnOneRedis() throws Exception {
        try (RedisServer redis = RedisServer.start()) { // on another port if another process takes its first
            int port = redis.port();
            String uri = redis.uri();
            Counts c = runFleet(uri);
            c.check();
            long evalshas = redisScriptCalls(port);
            System.out.printf("Redis script calls: %d for %d decisions%n", evalshas, c.decisions());
            assertThat(evalshas)
                    .as("script calls to Redis for %d decisions", c.decisions())
                    .isLessThan(c.decisions() / 4);
        }
    }

    @Test
    void threeJvmsOnOnePostgres() throws Exception {
        try (EmbeddedPostgres pg =
                EmbeddedPostgres.builder().setServerConfig("fsync", "off").start()) {
            String uri = "postgresql://postgres@localhost:" + pg.getPort() + "/postgres";
            assertThat(SluiceCommand.commandLine().execute("migrate", "--store", uri))
                    .isZero();
            runFleet(uri).check();
        }
    }

    @Test
    void leasesNeedARemoteStoreAndAPositiveMaximum() {
        try (Stores.Opened memory = Stores.open(
                "memory", 16, Stores.Budget.STORE_DEFAULT, 1, dev.sluice.failsafe.FailurePolicy.FAIL_OPEN)) {
            assertThat(Stores.leased(memory, 0)).as("--leases left out").isSameAs(memory);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> Stores.leased(memory, 1024))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--leases needs a remote store")
                    .hasMessageContaining("memory");
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> Stores.leased(memory, -5))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--leases -5 is negative");
        }
    }

    /** What the fleet admitted of each key, and the bound one shared limiter sets for the run's length. */
    private record Counts(long bucketAdmitted, long windowAdmitted, long elapsedNanos, long decisions) {
        void check() {
            System.out.printf(
                    "fleet of %d: token bucket admitted %d of %d (+ refill), fixed window %d of %d, "
                            + "%d decisions in %d ms%n",
                    NODES, bucketAdmitted, BUCKET, windowAdmitted, WINDOW, decisions, elapsedNanos / 1_000_000);
            // the token bucket gives one permit back every 6 s: during the run at most this many came back
            long refilled = elapsedNanos / TimeUnit.SECONDS.toNanos(6) + 1;
            assertThat(bucketAdmitted)
                    .as("token bucket %d an hour, %d decisions, %d ms run", BUCKET, REQUESTS, elapsedNanos / 1_000_000)
                    .isLessThanOrEqualTo(BUCKET + refilled);
            // an hour-long window: at most two windows meet a run this short
            assertThat(windowAdmitted).as("fixed window %d an hour", WINDOW).isLessThanOrEqualTo(2L * WINDOW);
            // under-admission is bounded by what the nodes may hold; every node is asked until the end
            assertThat(bucketAdmitted)
                    .as("token bucket admitted at least capacity − nodes × lease")
                    .isGreaterThanOrEqualTo(BUCKET - NODES * (LEASE + 1));
            assertThat(windowAdmitted)
                    .as("fixed window admitted at least limit − nodes × lease")
                    .isGreaterThanOrEqualTo(WINDOW - NODES * (LEASE + 1));
        }
    }

    private Counts runFleet(String store) throws Exception {
        Path rules = dir.resolve("rules-" + System.nanoTime() + ".yaml");
        Files.writeString(rules, RULES, StandardCharsets.UTF_8);
        List<Process> nodes = new ArrayList<>();
        List<String> bases = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < NODES; i++) {
                Path log = dir.resolve("node-" + i + "-" + System.nanoTime() + ".log");
                nodes.add(new ProcessBuilder(
                                javaBin(),
                                "-Xmx128m",
                                "-cp",
                                System.getProperty("java.class.path"),
                                SluiceCommand.class.getName(),
                                "serve",
                                "--store",
                                store,
                                "--leases=" + LEASE,
                                "--store-timeout",
                                "5s",
                                "--failure-policy",
                                "fail_closed",
                                "--config",
                                rules.toString(),
                                "--http",
                                "127.0.0.1:0", // a port of its own: one chosen here could be taken before it binds
                                "--grpc",
                                "off")
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start());
                logs.add(log);
            }
            for (int i = 0; i < NODES; i++) {
                bases.add(ServedAt.http(logs.get(i), nodes.get(i), Duration.ofMinutes(2)));
            }
            for (int i = 0; i < NODES; i++) {
                awaitReady(bases.get(i), nodes.get(i));
            }
            AtomicLong bucket = new AtomicLong();
            AtomicLong window = new AtomicLong();
            long start = System.nanoTime();
            ExecutorService pool = Executors.newFixedThreadPool(4 * NODES);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int i = 0; i < 2 * REQUESTS; i++) {
                    String base = bases.get(i % NODES);
                    boolean tenant = (i / NODES) % 2 == 0;
                    done.add(pool.submit(() -> {
                        int code = check(base, tenant ? "tenant" : "api");
                        if (code == 200) {
                            (tenant ? bucket : window).incrementAndGet();
                        } else if (code != 429) {
                            throw new AssertionError("node " + base + " answered " + code);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES); // a hang guard only
                }
            } finally {
                pool.shutdownNow();
            }
            return new Counts(bucket.get(), window.get(), System.nanoTime() - start, 2L * REQUESTS);
        } finally {
            for (Process p : nodes) {
                p.destroy();
            }
            for (Process p : nodes) {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
                }
            }
        }
    }

    private static int check(String base, String key) throws IOException, InterruptedException {
        String body =
                "{\"domain\":\"fleet\",\"descriptors\":[{\"entries\":[{\"key\":\"" + key + "\",\"value\":\"hot\"}]}]}";
        HttpRequest r = HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return HTTP.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** Waits for {@code /readyz} (the JVM starts and connects to the store); a hang guard of two minutes. */
    private static void awaitReady(String base, Process node) {
        Eventually.await(Duration.ofMinutes(2), "node " + base + " ready", () -> {
            assertThat(node.isAlive())
                    .as("node %s exited with %s", base, node.isAlive() ? "" : node.exitValue())
                    .isTrue();
            try {
                HttpResponse<Void> r = HTTP.send(
                        HttpRequest.newBuilder(URI.create(base + "/readyz"))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                return r.statusCode() == 200;
            } catch (IOException notYet) {
                return false; // not listening yet
            }
        });
    }

    /** EVALSHA and EVAL calls Redis has answered, from {@code INFO commandstats}. */
    private static long redisScriptCalls(int port) throws Exception {
        try (java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
            s.getOutputStream().write("INFO commandstats\r\nQUIT\r\n".getBytes(StandardCharsets.US_ASCII));
            String info = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            long calls = 0;
            for (String line : info.split("\r\n", -1)) {
                if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                    String v = line.substring(line.indexOf("calls=") + 6);
                    calls += Long.parseLong(v.substring(0, v.indexOf(',')));
                }
            }
            assertThat(info).contains("cmdstat_evalsha");
            return calls;
        }
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
