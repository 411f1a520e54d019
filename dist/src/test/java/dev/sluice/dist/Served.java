package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.redis.RedisServer;
import dev.sluice.tck.Eventually;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.ConnectException;
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
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@code sluice serve} of the unpacked distribution, run as its own process in the environment given (the no-JDK
 * one, {@link Distribution#noJdk}), its output in files. {@link #start} returns once the HTTP port answers
 * {@code awaitPath} with 200; {@link #stop()} sends SIGTERM, as Kubernetes and {@code docker stop} do, and returns
 * the exit code.
 */
final class Served implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private static final ObjectMapper JSON = new ObjectMapper();

    final Process process;
    final int httpPort;
    final Path stdout;
    final Path stderr;

    private Served(Process process, int httpPort, Path stdout, Path stderr) {
        this.process = process;
        this.httpPort = httpPort;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /**
     * Starts {@code command} (a {@code bin/sluice serve …} whose {@code --http} is 127.0.0.1:{@code httpPort}) in
     * exactly {@code env}, with its output in {@code dir}, and waits until {@code awaitPath} answers 200.
     */
    static Served start(Path dir, Map<String, String> env, List<String> command, int httpPort, String awaitPath)
            throws IOException, InterruptedException {
        Path out = dir.resolve("stdout.log");
        Path err = dir.resolve("stderr.log");
        ProcessBuilder pb =
                new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        Served s = new Served(pb.start(), httpPort, out, err);
        try {
            Eventually.await(Distribution.GUARD, "sluice serve answering 200 at " + awaitPath, () -> {
                if (!s.process.isAlive()) {
                    throw new AssertionError("sluice serve exited with " + s.process.exitValue() + " before "
                            + awaitPath + " answered 200; stderr:\n" + Files.readString(err) + "\nstdout:\n"
                            + Files.readString(out));
                }
                try {
                    // and the answer is this process's: it has logged that it started (seen in a full build:
                    // another process answering while this one was still starting, its output then empty)
                    return s.get(awaitPath).statusCode() == 200 && started(Files.readString(err));
                } catch (ConnectException notYet) {
                    return false; // not listening yet
                }
            });
        } catch (AssertionError e) {
            s.close();
            throw new AssertionError(e.getMessage() + "; stderr:\n" + Files.readString(err), e);
        }
        return s;
    }

    /** The log says the service started ({@code event=started}, as logfmt or JSON lines write it). */
    private static boolean started(String log) {
        return log.contains("event=started") || log.contains("\"event\":\"started\"");
    }

    /**
     * {@code bin/sluice serve} of the tarball on a host without Java ({@link Distribution#noJdk}): the example rules
     * of {@code config/}, HTTP on a free port of 127.0.0.1, then {@code options} ({@code --grpc off}, a store…);
     * returns once {@code /healthcheck} answers 200.
     */
    static Served example(Path dir, String... options) throws IOException, InterruptedException {
        Path home = Distribution.home();
        int http = RedisServer.freePort();
        List<String> command = new ArrayList<>(List.of(
                home.resolve("bin/sluice").toString(),
                "serve",
                "--config",
                home.resolve("config/sluice-example.yaml").toString(),
                "--http",
                "127.0.0.1:" + http));
        command.addAll(List.of(options));
        return start(dir, Distribution.noJdk(Map.of()), command, http, "/healthcheck");
    }

    /** The executable the process runs now (after {@code bin/sluice} exec'ed it): {@code /proc/PID/exe}. */
    Path executable() throws IOException {
        return Files.readSymbolicLink(Path.of("/proc", Long.toString(process.pid()), "exe"));
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return get(httpPort, path);
    }

    /** {@code GET path} on 127.0.0.1:{@code port}. */
    static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** {@code POST /v1/check} of one descriptor {@code key=value}: the status and the JSON answer. */
    Answer check(String domain, String key, String value) throws IOException, InterruptedException {
        String body = "{\"domain\":\"" + domain + "\",\"descriptors\":[{\"entries\":[{\"key\":\"" + key
                + "\",\"value\":\"" + value + "\"}]}]}";
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/v1/check"))
                        .header("Content-Type", "application/json")
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), JSON.readTree(r.body()));
    }

    /** A status and its JSON body. */
    record Answer(int status, JsonNode json) {}

    /** envoy's {@code ShouldRateLimit} over gRPC at {@code port}: one descriptor {@code key=value}. */
    static RateLimitResponse shouldRateLimit(int port, String domain, String key, String value) {
        ManagedChannel channel =
                NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        try {
            return RateLimitServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .shouldRateLimit(RateLimitRequest.newBuilder()
                            .setDomain(domain)
                            .addDescriptors(RateLimitDescriptor.newBuilder()
                                    .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                            .setKey(key)
                                            .setValue(value)))
                            .build());
        } finally {
            channel.shutdownNow();
        }
    }

    /** SIGTERM, then the exit code once the process has ended (within the hang guard). */
    int stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(Distribution.GUARD.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(Distribution.GUARD.toSeconds(), TimeUnit.SECONDS);
            throw new AssertionError("sluice serve still running " + Distribution.GUARD + " after SIGTERM");
        }
        return process.exitValue();
    }

    /**
     * Stops it with SIGTERM and checks it ended as a service should: exit code 143 (the JVM's 128 + SIGTERM, what
     * Kubernetes counts as a normal stop), the shutdown logged as finished, and no warning or error on the way.
     */
    void stopsCleanly() throws IOException, InterruptedException {
        assertThat(stop()).as("exit code after SIGTERM").isEqualTo(143);
        List<String> lines = Files.readAllLines(stderr, StandardCharsets.UTF_8);
        assertThat(lines)
                .as("stderr (stdout: %s)", Files.readString(stdout))
                .anyMatch(l -> l.contains("event=shutdown_finished"));
        List<String> bad = new ArrayList<>();
        for (String l : lines) {
            if (l.contains("level=WARN") || l.contains("level=ERROR") || l.contains("Exception")) {
                bad.add(l);
            }
        }
        assertThat(bad).as("warnings and errors on stderr").isEmpty();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            try {
                stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }
}
