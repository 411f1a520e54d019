package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.client.RemoteRateLimiter;
import dev.sluice.redis.RedisServer;
import dev.sluice.tck.Eventually;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
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
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice serve} as a process of its own, as an operator runs it: started while its Redis is stopped, it
 * answers by its policy and writes at most three lines to stderr over ten seconds of outage, then decides exactly
 * once Redis is started; started fresh on a healthy PostgreSQL, its first burst of decisions, right after it says
 * it is serving, is the store's, and so is a {@link RemoteRateLimiter}'s first call. Counted, not timed: the
 * seconds here are windows, every assertion counts lines or degraded answers.
 */
class ServeStartAndOutageTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** A {@code serve} process: stdout and stderr in files of their own. */
    private static final class Serve implements AutoCloseable {
        final Process process;
        final Path out;
        final Path err;
        /** Where it serves HTTP, once {@link #awaitServing()} read it from the banner. */
        String base;

        Serve(Path dir, String store) throws IOException {
            long n = System.nanoTime();
            this.out = dir.resolve("serve-" + n + ".out");
            this.err = dir.resolve("serve-" + n + ".err");
            this.process = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-Xmx256m",
                            "-cp",
                            System.getProperty("java.class.path"),
                            SluiceCommand.class.getName(),
                            "serve",
                            "--store",
                            store,
                            "--http",
                            "127.0.0.1:0", // a port of its own: one chosen here could be taken before it binds
                            "--grpc",
                            "off")
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
        }

        /**
         * Waits for the banner on stdout (the service says it is serving) and reads where. Two minutes is the hang
         * guard.
         */
        void awaitServing() throws Exception {
            try {
                base = ServedAt.http(out, process, Duration.ofMinutes(2));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nstderr: " + Files.readString(err), e);
            }
            assertThat(Files.readString(out)).contains("sluice is serving");
        }

        List<String> stderrLines() throws IOException {
            return Files.readAllLines(err, StandardCharsets.UTF_8);
        }

        JsonNode check(String user) throws Exception {
            String body = "{\"domain\":\"example\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"" + user
                    + "\"}]}]}";
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                            .timeout(Duration.ofSeconds(20))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(r.body());
        }

        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void startedWhileRedisIsStoppedItAnswersDegradedLogsAtMostThreeLinesAndDecidesOnceRedisIsUp() throws Exception {
        Path dir = Files.createTempDirectory("sluice-serve-outage");
        RedisServer redis = RedisServer.onFreePort();
        try (redis;
                Serve serve = new Serve(dir, redis.uri())) {
            serve.awaitServing();
            long outageEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int degraded = 0;
            while (System.nanoTime() < outageEnd) {
                JsonNode a = serve.check(UUID.randomUUID().toString());
                assertThat(a.path("degraded").asText()).as(a.toString()).isEqualTo("unavailable");
                degraded++;
                // ten seconds of outage in another JVM (its opener retries every probe interval meanwhile), a call
                // every 100 ms: a pace on real time, since that JVM's clock is real, not a wait for a condition
                Thread.sleep(100);
            }
            List<String> lines = serve.stderrLines();
            assertThat(lines)
                    .as("stderr over %d degraded answers in 10 s of outage", degraded)
                    .hasSizeLessThanOrEqualTo(3);

            redis.startProcess();
            String user = UUID.randomUUID().toString();
            // the store opens within a probe interval of Redis's start, in another JVM
            Eventually.await(
                    Duration.ofSeconds(20),
                    "Redis deciding once it is up",
                    () -> !serve.check(user).has("degraded"));
            String fresh = UUID.randomUUID().toString();
            for (long remaining = 9; remaining >= 7; remaining--) {
                JsonNode d = serve.check(fresh);
                assertThat(d.has("degraded")).isFalse();
                assertThat(d.get("statuses").get(0).get("remaining").asLong()).isEqualTo(remaining);
            }
            assertThat(serve.stderrLines().size() - lines.size())
                    .as("lines once Redis is back: %s", serve.stderrLines())
                    .isLessThanOrEqualTo(2);
        }
    }

    @Test
    void theFirstDecisionsOfAFreshServiceOverAHealthyPostgresAreTheStores() throws Exception {
        Path dir = Files.createTempDirectory("sluice-serve-fresh");
        try (EmbeddedPostgres pg =
                EmbeddedPostgres.builder().setServerConfig("fsync", "off").start()) {
            String uri = "postgresql://postgres@127.0.0.1:" + pg.getPort() + "/postgres";
            assertThat(SluiceCommand.commandLine().execute("migrate", "--store", uri))
                    .isZero();
            try (Serve serve = new Serve(dir, uri)) {
                serve.awaitServing();
                try (RemoteRateLimiter remote = RemoteRateLimiter.create(serve.base)) {
                    // the service's very first request, within the client's default budget of 1 s
                    Decision d =
                            remote.tryAcquire("remote-" + UUID.randomUUID(), Limit.tokenBucket(5, Rate.perSecond(1)));
                    assertThat(d.degraded()).isFalse();
                    assertThat(d.remaining()).isEqualTo(4);
                }
                List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
                for (int i = 0; i < 32; i++) {
                    String body =
                            "{\"domain\":\"example\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\""
                                    + UUID.randomUUID() + "\"}]}]}";
                    burst.add(HTTP.sendAsync(
                            HttpRequest.newBuilder(URI.create(serve.base + "/v1/check"))
                                    .timeout(Duration.ofSeconds(20))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString()));
                }
                int degraded = 0;
                for (var f : burst) {
                    JsonNode a = JSON.readTree(f.get(30, TimeUnit.SECONDS).body());
                    degraded += a.has("degraded") ? 1 : 0;
                }
                assertThat(degraded)
                        .as("degraded answers among the first 32, all at once")
                        .isZero();
            }
        }
    }
}
