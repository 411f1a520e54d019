package dev.sluice.server;

import static dev.sluice.server.EnvoyCompatibilityTest.d;
import static dev.sluice.server.EnvoyCompatibilityTest.ok;
import static dev.sluice.server.EnvoyCompatibilityTest.req;
import static dev.sluice.server.EnvoyCompatibilityTest.resp;
import static dev.sluice.server.EnvoyCompatibilityTest.status;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code.OK;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code.OVER_LIMIT;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.HOUR;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.MINUTE;
import static io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit.SECOND;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.RedisServer;
import dev.sluice.server.cli.SluiceCommand;
import dev.sluice.tck.Eventually;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * envoy's integration tests' environment, unchanged but for the machine (ports: 0, bound on 127.0.0.1; REDIS_URL: the
 * test's real redis-server; RUNTIME_ROOT: a copy of envoy's runtime directory behind a symlink), drives a {@code sluice
 * serve} process with no flags at all, and envoy's integration cases answer over gRPC as they do against envoy's
 * service (test/integration/integration_test.go, {@code testBasicBaseConfig} and {@code testConfigReload}, the reload
 * here by a swap of the RUNTIME_ROOT symlink, envoy's RUNTIME_WATCH_ROOT default). The debug port prints the rules as
 * envoy's {@code /rlconfig} does.
 *
 * <p>Time is real here (Redis's clock decides): a case that sees its window end midway (its {@code
 * duration_until_reset} goes up) is run again on fresh keys, as many as three times.
 */
class EnvoyIntegrationEnvironmentTest {
    private static final String RUNTIME = "envoy-upstream/test/integration/runtime/current/ratelimit/";
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final Pattern GRPC = Pattern.compile("^  gRPC  127\\.0\\.0\\.1:(\\d+)", Pattern.MULTILINE);
    private static final Pattern HTTP_PORT =
            Pattern.compile("^  HTTP  http://127\\.0\\.0\\.1:(\\d+)", Pattern.MULTILINE);
    private static final Pattern DEBUG = Pattern.compile("^  Debug  (http://127\\.0\\.0\\.1:\\d+)", Pattern.MULTILINE);

    /**
     * {@code stopIncrement}: envoy's {@code makeSimpleRedisSettingsWithStopCacheKeyIncrementWhenOverlimit}, the same
     * settings with {@code STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true}.
     */
    @ParameterizedTest(name = "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT={0}")
    @ValueSource(booleans = {false, true})
    void envoysIntegrationEnvironmentDrivesServeAndItsCasesAnswerAsEnvoys(boolean stopIncrement, @TempDir Path dir)
            throws Exception {
        Path v1 = runtime(dir.resolve("v1"), false);
        Path current = Files.createSymbolicLink(dir.resolve("current"), v1);
        try (RedisServer redis = RedisServer.start()) {
            // defaultSettings() + makeSimpleRedisSettings(port, perSecondPort, false, 0), USE_STATSD=false (init)
            Map<String, String> env = new HashMap<>(Map.ofEntries(
                    Map.entry("USE_STATSD", "false"),
                    Map.entry("RUNTIME_ROOT", current.toString()),
                    Map.entry("RUNTIME_SUBDIRECTORY", "ratelimit"),
                    Map.entry("RUNTIME_APPDIRECTORY", "config"),
                    Map.entry("REDIS_PERSECOND_SOCKET_TYPE", "tcp"),
                    Map.entry("REDIS_SOCKET_TYPE", "tcp"),
                    Map.entry("DEBUG_HOST", "127.0.0.1"),
                    Map.entry("DEBUG_PORT", "0"),
                    Map.entry("HOST", "127.0.0.1"),
                    Map.entry("PORT", "0"),
                    Map.entry("GRPC_HOST", "127.0.0.1"),
                    Map.entry("GRPC_PORT", "0"),
                    Map.entry("REDIS_PERSECOND", "false"),
                    Map.entry("LOCAL_CACHE_SIZE_IN_BYTES", "0"),
                    Map.entry("BACKEND_TYPE", "redis"),
                    Map.entry("REDIS_URL", "127.0.0.1:" + redis.port()),
                    Map.entry("REDIS_PERSECOND_URL", "localhost:6380")));
            if (stopIncrement) {
                env.put("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", "true");
            }
            Path out = dir.resolve("serve.out");
            Path err = dir.resolve("serve.err");
            ProcessBuilder pb = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-Xmx256m",
                            "-cp",
                            System.getProperty("java.class.path"),
                            SluiceCommand.class.getName(),
                            "serve")
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            pb.environment().clear(); // the machine's own variables (a PORT, a LOG_LEVEL) are not envoy's settings
            pb.environment().putAll(env);
            Process serve = pb.start();
            try {
                String banner = awaitBanner(out, err, serve);
                int grpcPort = Integer.parseInt(group(GRPC, banner));
                String debug = group(DEBUG, banner);
                assertThat(grpcPort)
                        .as("GRPC_PORT=0: a port of its own, not serve's default")
                        .isNotEqualTo(8081);
                assertThat(Integer.parseInt(group(HTTP_PORT, banner)))
                        .as("PORT=0: a port of its own, not serve's default")
                        .isNotEqualTo(8080);
                ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPort)
                        .usePlaintext()
                        .build();
                try {
                    var stub = RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(1, TimeUnit.MINUTES);
                    basicBaseConfig(r -> stub.shouldRateLimit(r), stopIncrement);

                    assertThat(get(debug + "/rlconfig"))
                            .contains("basic.key1: unit=SECOND requests_per_unit=50, shadow_mode: false, "
                                    + "quota_mode: false\n")
                            .contains("another.key3: unit=HOUR requests_per_unit=10, shadow_mode: false, "
                                    + "quota_mode: false\n")
                            .doesNotContain("reload.");
                    assertThat(get(debug + "/healthcheck")).isEqualTo("OK");
                    assertThat(get(debug + "/stats"))
                            .contains("ratelimit.service.rate_limit.basic.key1.total_hits: 1\n");

                    // testConfigReload: "reload" is unknown, then envoy's reload.yaml appears in the config directory
                    assertThat(stub.shouldRateLimit(req("reload", d("block=foo"))))
                            .isEqualTo(resp(OK, ok()));
                    Path v2 = runtime(dir.resolve("v2"), true);
                    Path next = Files.createSymbolicLink(dir.resolve("current.next"), v2);
                    Files.move(next, current, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    Eventually.await(
                            Duration.ofMinutes(1),
                            "the swap of RUNTIME_ROOT reloaded",
                            () -> get(debug + "/rlconfig").contains("reload.key1: unit=SECOND"));
                    RateLimitResponse r = stub.shouldRateLimit(req("reload", d("key1=foo")));
                    assertThat(r).isEqualTo(resp(OK, status(OK, 50, SECOND, 49, reset(r, 0))));
                    assertThat(stub.shouldRateLimit(req("reload", d("block=foo")))
                                    .getOverallCode())
                            .as("requests_per_unit: 0")
                            .isEqualTo(OVER_LIMIT);
                } finally {
                    channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
                }
                assertThat(Files.readString(err))
                        .as("what envoy ignores too is said once")
                        .contains("event=env_ignored variable=REDIS_PERSECOND_URL")
                        .doesNotContain("start_refused");
            } finally {
                serve.destroy();
                if (!serve.waitFor(20, TimeUnit.SECONDS)) {
                    serve.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
                }
            }
        }
    }

    /**
     * testBasicBaseConfig's requests and expected answers, on fresh keys; retried when a window ends midway. With
     * {@code stopIncrement}, as envoy's test expects: key2 is no longer counted once key3 is over.
     */
    private static void basicBaseConfig(Call c, boolean stopIncrement) throws Exception {
        assertThat(c.call(req("foo", d("hello=world")))).isEqualTo(resp(OK, ok()));
        RateLimitResponse first = c.call(req("basic", d("key1=foo")));
        assertThat(first).isEqualTo(resp(OK, status(OK, 50, SECOND, 49, reset(first, 0))));

        inOneWindow(() -> {
            String random = UUID.randomUUID().toString();
            long last = Long.MAX_VALUE;
            for (int i = 0; i < 25; i++) {
                Code code = i >= 20 ? OVER_LIMIT : OK;
                long remaining = i >= 20 ? 0 : 20 - (i + 1);
                RateLimitResponse r = c.call(req("another", d("key2=" + random)));
                last = sameWindow(last, reset(r, 0));
                assertThat(r)
                        .as("key2, request %d", i + 1)
                        .isEqualTo(resp(code, status(code, 20, MINUTE, remaining, reset(r, 0))));
            }
        });
        inOneWindow(() -> {
            String random = UUID.randomUUID().toString();
            long last = Long.MAX_VALUE;
            for (int i = 0; i < 15; i++) {
                Code code = i >= 10 ? OVER_LIMIT : OK;
                long remaining1 = i >= 10 && stopIncrement ? 10 : 20L - (i + 1);
                long remaining2 = i >= 10 ? 0 : 10 - (i + 1);
                RateLimitResponse r = c.call(req("another", d("key2=" + random), d("key3=" + random)));
                last = sameWindow(last, reset(r, 0));
                assertThat(r)
                        .as("key2 and key3, request %d", i + 1)
                        .isEqualTo(resp(
                                code,
                                status(OK, 20, MINUTE, remaining1, reset(r, 0)),
                                status(code, 10, HOUR, remaining2, reset(r, 1))));
            }
        });
    }

    interface Call {
        RateLimitResponse call(RateLimitRequest r);
    }

    interface Case {
        void run() throws Exception;
    }

    /** A window ended between two calls of a case: its counts started again. */
    private static final class WindowEnded extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    private static void inOneWindow(Case c) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                c.run();
                return;
            } catch (WindowEnded e) {
                if (attempt == 3) {
                    throw new AssertionError("a window ended during each of three attempts", e);
                }
            }
        }
    }

    /** The seconds until the first status's window resets, which only go down within one window. */
    private static long sameWindow(long before, long now) {
        if (now > before) {
            throw new WindowEnded();
        }
        return now;
    }

    /** The seconds until the {@code i}th status's window resets, as answered (envoy's tests take it likewise). */
    private static long reset(RateLimitResponse r, int i) {
        DescriptorStatus s = r.getStatuses(i);
        long seconds = s.getDurationUntilReset().getSeconds();
        long unit = switch (s.getCurrentLimit().getUnit()) {
            case SECOND -> 1;
            case MINUTE -> 60;
            case HOUR -> 3600;
            default -> 86_400;
        };
        assertThat(seconds).as("duration_until_reset within the unit").isBetween(1L, unit);
        return seconds;
    }

    /** A copy of envoy's runtime directory at {@code root}: ratelimit/config/*.yaml, and reload.yaml in it if asked. */
    private static Path runtime(Path root, boolean withReload) throws IOException {
        Path config = Files.createDirectories(root.resolve("ratelimit/config"));
        for (String f : List.of("basic.yaml", "another.yaml", "share_threshold.yaml")) {
            copy(RUNTIME + "config/" + f, config.resolve(f));
        }
        copy(RUNTIME + "reload.yaml", root.resolve("ratelimit/reload.yaml"));
        if (withReload) {
            copy(RUNTIME + "reload.yaml", config.resolve("reload.yaml"));
        }
        return root;
    }

    private static void copy(String resource, Path to) throws IOException {
        try (InputStream in = Objects.requireNonNull(
                EnvoyIntegrationEnvironmentTest.class.getClassLoader().getResourceAsStream(resource), resource)) {
            Files.copy(in, to);
        }
    }

    private static String awaitBanner(Path out, Path err, Process serve) throws IOException {
        AtomicReference<String> banner = new AtomicReference<>();
        try {
            Eventually.await(Duration.ofMinutes(2), "sluice serve's banner", () -> {
                String text = Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8) : "";
                if (DEBUG.matcher(text).find() && GRPC.matcher(text).find()) {
                    banner.set(text);
                    return true;
                }
                if (!serve.isAlive()) {
                    throw new IllegalStateException("serve exited with " + serve.exitValue() + ": " + text);
                }
                return false;
            });
        } catch (AssertionError | IllegalStateException e) {
            throw new AssertionError(e.getMessage() + "\nstderr: " + Files.readString(err), e);
        }
        return banner.get();
    }

    private static String group(Pattern p, String text) {
        Matcher m = p.matcher(text);
        assertThat(m.find()).as(p + " in " + text).isTrue();
        return m.group(1);
    }

    private static String get(String url) throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(20))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body();
    }
}
