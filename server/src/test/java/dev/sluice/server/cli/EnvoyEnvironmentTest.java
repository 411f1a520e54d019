package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.server.cli.EnvoyEnvironment.Finding;
import dev.sluice.server.cli.EnvoyEnvironment.Level;
import dev.sluice.server.config.Semantics;
import dev.sluice.server.envoy.EnvoyOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * envoy's environment read by {@code sluice serve}: every variable of envoy's settings.go has a row; the variables
 * envoy's integration tests set become serve's options; a flag wins; a refused variable stops the start with its name
 * and exit code 2, and a secret is never echoed.
 */
class EnvoyEnvironmentTest {

    /**
     * The environment of envoy's integration tests (test/integration/integration_test.go): {@code defaultSettings()}
     * plus {@code makeSimpleRedisSettings(6383, 6380, false, 0)}, and {@code USE_STATSD=false} from its {@code init}.
     */
    static Map<String, String> envoysIntegrationSettings() {
        Map<String, String> env = new HashMap<>();
        env.put("USE_STATSD", "false");
        env.put("RUNTIME_ROOT", "runtime/current");
        env.put("RUNTIME_SUBDIRECTORY", "ratelimit");
        env.put("RUNTIME_APPDIRECTORY", "config");
        env.put("REDIS_PERSECOND_SOCKET_TYPE", "tcp");
        env.put("REDIS_SOCKET_TYPE", "tcp");
        env.put("DEBUG_PORT", "8084");
        env.put("PORT", "8082");
        env.put("GRPC_PORT", "8083");
        env.put("REDIS_PERSECOND", "false");
        env.put("LOCAL_CACHE_SIZE_IN_BYTES", "0");
        env.put("BACKEND_TYPE", "redis");
        env.put("REDIS_URL", "localhost:6383");
        env.put("REDIS_PERSECOND_URL", "localhost:6380");
        return env;
    }

    /** serve's options parsed from {@code args} with {@code env} as the environment. */
    private static ServeCommand parse(Map<String, String> env, String... args) {
        ServeCommand serve = new ServeCommand();
        CommandLine cl = new CommandLine(serve);
        cl.setDefaultValueProvider(new EnvoyEnvironment(env));
        cl.parseArgs(args);
        return serve;
    }

    /** What {@code sluice serve} (listening on nothing) did with {@code env}: its exit code and its stderr. */
    private record Started(int exitCode, String stderr) {}

    private static Started serve(Map<String, String> env) {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            int code = SluiceCommand.commandLine(env).execute("serve", "--http", "off", "--grpc", "off");
            return new Started(code, captured.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(err);
        }
    }

    private static List<Finding> findings(Map<String, String> env, String... args) {
        CommandLine cl = new CommandLine(new ServeCommand());
        cl.setDefaultValueProvider(new EnvoyEnvironment(env));
        CommandLine.ParseResult parsed = cl.parseArgs(args);
        return new EnvoyEnvironment(env)
                .findings(o -> cl.getCommandSpec().findOption(o) != null, parsed::hasMatchedOption);
    }

    private static List<String> refusals(Map<String, String> env, String... args) {
        return findings(env, args).stream()
                .filter(f -> f.level() == Level.REFUSED)
                .map(Finding::message)
                .toList();
    }

    @Test
    void everyVariableOfEnvoysSettingsHasARow() throws IOException {
        List<String> names;
        try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream("/envoy-settings-variables.txt"))) {
            names = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .map(String::trim)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .toList();
        }
        assertThat(names).hasSizeGreaterThan(100).contains("REDIS_URL", "RUNTIME_ROOT", "TRACING_SAMPLING_RATE");
        assertThat(EnvoyVariables.ROWS.keySet()).containsExactlyInAnyOrderElementsOf(names);
        for (EnvoyEnvironment.Row r : EnvoyVariables.ROWS.values()) {
            if (r.use() == EnvoyEnvironment.Use.SETS) {
                assertThat(EnvoyEnvironment.OPTIONS).as(r.variable()).containsKey(r.option());
                assertThat(new CommandLine(new ServeCommand()).getCommandSpec().findOption(r.option()))
                        .as("%s sets %s, an option of serve's", r.variable(), r.option())
                        .isNotNull();
            }
        }
    }

    @Test
    void envoysIntegrationSettingsSetServesOptionsWithEnvoysDefaults() {
        ServeCommand serve = parse(envoysIntegrationSettings());
        assertThat(serve.http).isEqualTo("0.0.0.0:8082");
        assertThat(serve.grpc).isEqualTo("0.0.0.0:8083");
        assertThat(serve.debug).isEqualTo("0.0.0.0:8084");
        assertThat(serve.config).containsExactly(Path.of("runtime/current/ratelimit/config"));
        assertThat(serve.stores.store).isEqualTo("redis://localhost:6383");
        assertThat(serve.envoyApi.semantics).isEqualTo("envoy");

        List<Finding> said = findings(envoysIntegrationSettings());
        assertThat(said).extracting(Finding::level).doesNotContain(Level.REFUSED);
        assertThat(said)
                .filteredOn(f -> f.level() == Level.IGNORED)
                .extracting(Finding::variable)
                .containsExactly("REDIS_PERSECOND_SOCKET_TYPE", "REDIS_PERSECOND_URL");
        assertThat(said)
                .filteredOn(f -> f.level() == Level.NO_EFFECT)
                .extracting(Finding::variable)
                .containsExactly("LOCAL_CACHE_SIZE_IN_BYTES");
    }

    @Test
    void withRuntimeRootAndNoPortsTheListenersAreEnvoysDefaults() {
        ServeCommand serve = parse(Map.of("RUNTIME_ROOT", "/data", "REDIS_URL", "redis:6379"));
        assertThat(serve.http).isEqualTo("0.0.0.0:8080");
        assertThat(serve.grpc).isEqualTo("0.0.0.0:8081");
        assertThat(serve.debug).isEqualTo("0.0.0.0:6070");
        assertThat(serve.config).containsExactly(Path.of("/data/config"));
    }

    @Test
    void withoutRuntimeRootAPortAloneKeepsLoopbackAndNoDebugPort() {
        ServeCommand serve = parse(Map.of("PORT", "9000"));
        assertThat(serve.http).isEqualTo("127.0.0.1:9000");
        assertThat(serve.grpc).as("serve's own default").isEqualTo("127.0.0.1:8081");
        assertThat(serve.debug).isEqualTo("off");
        assertThat(serve.stores.store).isEqualTo("memory");
        assertThat(parse(Map.of()).http).isEqualTo("127.0.0.1:8080");
        assertThat(parse(Map.of("GRPC_HOST", "::1", "GRPC_PORT", "9001")).grpc).isEqualTo("[::1]:9001");
    }

    @Test
    void flagsWinOverVariablesAndOverTheirRefusals() {
        Map<String, String> env = envoysIntegrationSettings();
        env.put("REDIS_TYPE", "bogus");
        env.put("LOG_LEVEL", "debug");
        assertThat(refusals(env)).singleElement().asString().startsWith("REDIS_TYPE 'bogus' is unknown");

        ServeCommand serve = parse(env, "--http", "127.0.0.1:0", "--store", "memory", "--log-level", "warn");
        assertThat(serve.http).isEqualTo("127.0.0.1:0");
        assertThat(serve.stores.store).isEqualTo("memory");
        assertThat(serve.logLevels).containsExactly("warn");
        assertThat(serve.grpc).as("no flag: the variable").isEqualTo("0.0.0.0:8083");
        assertThat(refusals(env, "--store", "memory"))
                .as("--store decides the store")
                .isEmpty();
        assertThat(parse(env).logLevels).containsExactly("debug");
    }

    @Test
    void envoysRedisVariablesMakeTheStoreUrl() {
        assertThat(parse(Map.of("REDIS_URL", "r:6379", "REDIS_AUTH", "user:p@ss word")).stores.store)
                .isEqualTo("redis://user:p%40ss%20word@r:6379");
        assertThat(parse(Map.of("REDIS_URL", "r:6379", "REDIS_AUTH", "secret", "REDIS_TLS", "True")).stores.store)
                .isEqualTo("rediss://:secret@r:6379");
        assertThat(parse(Map.of("REDIS_URL", "a:7000,b:7001", "REDIS_TYPE", "CLUSTER")).stores.store)
                .isEqualTo("redis://a:7000,b:7001");
        assertThat(EnvoyEnvironment.word("T")).isEqualTo("true");
        assertThat(parse(Map.of("REDIS_URL", "mymaster,s1:26394,s2:26395", "REDIS_TYPE", "sentinel")).stores.store)
                .isEqualTo("redis-sentinel://s1:26394,s2:26395#mymaster");
        assertThat(EnvoyRedis.sentinelStore("mymaster,s1:26394,s2:26395", "password123", false))
                .isEqualTo("redis-sentinel://:password123@s1:26394,s2:26395#mymaster");
        assertThatThrownBy(() -> EnvoyRedis.sentinelStore("s1:26394", null, false))
                .hasMessageContaining("REDIS_URL=master-name,host:26379");

        assertThat(refusals(Map.of("REDIS_URL", "/var/run/r.sock", "REDIS_SOCKET_TYPE", "unix")))
                .singleElement()
                .asString()
                .startsWith("REDIS_SOCKET_TYPE=unix is not supported");
        assertThat(findings(Map.of("RUNTIME_ROOT", "/data")))
                .extracting(Finding::variable)
                .as("the variable, not the option, names the line")
                .containsExactly("REDIS_URL");
        assertThat(refusals(Map.of("RUNTIME_ROOT", "/data")))
                .as("envoy's default REDIS_URL is a unix socket")
                .singleElement()
                .asString()
                .startsWith("REDIS_URL is not set");
        assertThat(refusals(Map.of("BACKEND_TYPE", "memcache", "MEMCACHE_HOST_PORT", "m:11211")))
                .containsExactly(
                        "BACKEND_TYPE=memcache is not supported: Sluice's stores are Redis, PostgreSQL and memory: set"
                                + " BACKEND_TYPE=redis and REDIS_URL=host:port, or pass --store",
                        "MEMCACHE_HOST_PORT is not supported: Sluice's stores are Redis, PostgreSQL and memory");
    }

    /** envoy's docker-compose.yml sets MEMCACHE_HOST_PORT beside the default BACKEND_TYPE: envoy ignores it too. */
    @Test
    void envoysDockerComposeEnvironmentStartsWithOneLineForWhatEnvoyIgnoresToo() {
        Map<String, String> env = Map.of(
                "USE_STATSD", "false",
                "LOG_LEVEL", "debug",
                "REDIS_SOCKET_TYPE", "tcp",
                "REDIS_URL", "redis:6379",
                "RUNTIME_ROOT", "/data",
                "RUNTIME_SUBDIRECTORY", "ratelimit",
                "MEMCACHE_HOST_PORT", "memcached:11211");
        assertThat(findings(env))
                .containsExactly(new Finding(
                        "MEMCACHE_HOST_PORT",
                        Level.IGNORED,
                        null,
                        "MEMCACHE_HOST_PORT is ignored, as envoy ignores it unless BACKEND_TYPE=memcache"));
        ServeCommand serve = parse(env);
        assertThat(serve.config).containsExactly(Path.of("/data/ratelimit/config"));
        assertThat(serve.logLevels).containsExactly("debug");
    }

    @Test
    void refusalsNameTheVariableAndNeverEchoASecret() {
        assertThat(refusals(Map.of("USE_STATSD", "true", "STATSD_HOST", "stats.internal", "USE_PROMETHEUS", "true")))
                .isEmpty();
        assertThat(parse(Map.of("USE_STATSD", "true", "STATSD_HOST", "stats.internal")).stats.statsd)
                .isEqualTo("stats.internal:8125");
        assertThat(refusals(Map.of("USE_STATSD", "false", "USE_PROMETHEUS", "0")))
                .isEmpty();
        assertThat(refusals(Map.of("USE_DOG_STATSD", "true")))
                .singleElement()
                .asString()
                .startsWith("USE_DOG_STATSD=true is not supported: ");
        assertThat(refusals(Map.of("REDIS_TLS_CLIENT_KEY", "/secret/key.pem")))
                .singleElement()
                .asString()
                .startsWith("REDIS_TLS_CLIENT_KEY is not supported: ")
                .doesNotContain("/secret");
        assertThat(refusals(Map.of("REDIS_URL", "r:1", "REDIS_TYPE", "sentinel", "REDIS_AUTH", "hunter2")))
                .singleElement()
                .asString()
                .doesNotContain("hunter2");
        assertThat(refusals(Map.of("PORT", "80a")))
                .containsExactly("PORT '80a' is not a port number: write e.g. " + "PORT=8080");
        assertThat(refusals(Map.of("LOG_FORMAT", "xml")))
                .containsExactly("LOG_FORMAT 'xml' is unknown: write text " + "or json");
        assertThat(refusals(Map.of("GRPC_SERVER_USE_TLS", "false", "CONFIG_TYPE", "FILE", "SHADOW_MODE", "0")))
                .as("the values that mean what Sluice does anyway")
                .isEmpty();
        assertThat(findings(Map.of("REDIS_POOL_SIZE", "10", "  ", "x", "SHADOW_MODE", " ")))
                .as("a blank value is unset")
                .extracting(Finding::level)
                .containsExactly(Level.NO_EFFECT);
    }

    @Test
    void envoysValuesBecomeSluicesWords() {
        assertThat(parse(Map.of("LOG_LEVEL", "WARN")).logLevels).containsExactly("warn");
        assertThat(parse(Map.of("LOG_LEVEL", "fatal")).logLevels).containsExactly("error");
        assertThat(parse(Map.of("LOG_FORMAT", "text")).logFormat).isEqualTo("logfmt");
        assertThat(parse(Map.of("LOG_FORMAT", "json")).logFormat).isEqualTo("json");
        assertThat(parse(Map.of("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", "true")).envoyApi.semantics)
                .isEqualTo("strict");
        assertThat(parse(Map.of("LIMIT_RESPONSE_HEADERS_ENABLED", "1")).envoyApi.rlsResponseHeaders)
                .isEqualTo("envoy");
        assertThat(parse(Map.of("RESPONSE_DYNAMIC_METADATA", "true")).envoyApi.rlsDynamicMetadata)
                .isTrue();
        assertThat(parse(Map.of("RESPONSE_DYNAMIC_METADATA", "false")).envoyApi.rlsDynamicMetadata)
                .isFalse();
    }

    /** envoy's global SHADOW_MODE and QUOTA_MODE set --shadow-mode and --quota-mode; a flag wins either way. */
    @Test
    void globalShadowAndQuotaModesSetTheirOptionsAndFlagsWin() {
        assertThat(parse(Map.of()).envoyApi.shadowMode).as("off by default").isFalse();
        assertThat(parse(Map.of()).envoyApi.quotaMode).isFalse();
        assertThat(parse(Map.of("SHADOW_MODE", "true")).envoyApi.shadowMode).isTrue();
        assertThat(parse(Map.of("SHADOW_MODE", "true")).envoyApi.quotaMode).isFalse();
        assertThat(parse(Map.of("QUOTA_MODE", "T")).envoyApi.quotaMode).isTrue();
        assertThat(parse(Map.of("SHADOW_MODE", "false")).envoyApi.shadowMode).isFalse();
        assertThat(refusals(Map.of("SHADOW_MODE", "true", "QUOTA_MODE", "1"))).isEmpty();

        assertThat(parse(Map.of("SHADOW_MODE", "true"), "--shadow-mode=false").envoyApi.shadowMode)
                .as("the flag wins")
                .isFalse();
        assertThat(parse(Map.of("QUOTA_MODE", "false"), "--quota-mode").envoyApi.quotaMode)
                .isTrue();
        assertThat(refusals(Map.of("SHADOW_MODE", "maybe")))
                .containsExactly("SHADOW_MODE 'maybe' is not a boolean: write true or false");
        assertThat(refusals(Map.of("SHADOW_MODE", "maybe"), "--shadow-mode"))
                .as("the flag wins over the refusal too")
                .isEmpty();
    }

    /**
     * Strict semantics are all or nothing: envoy's global quota mode cannot be honoured with them, so the Envoy APIs'
     * options refuse the pair (serve turns the refusal into exit code 2 with its message, as any bad option value).
     */
    @Test
    void quotaModeWithStrictSemanticsIsRefusedSayingWhy() {
        ServeCommand serve = parse(Map.of("QUOTA_MODE", "true", "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", "1"));
        assertThat(serve.envoyApi.semantics).isEqualTo("strict");
        assertThat(serve.envoyApi.quotaMode).isTrue();
        assertThatThrownBy(() -> new EnvoyOptions(Semantics.STRICT, EnvoyOptions.Headers.NONE, false, false, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--quota-mode (envoy's QUOTA_MODE) cannot go with --semantics strict");
        assertThat(new EnvoyOptions(Semantics.STRICT, EnvoyOptions.Headers.NONE, false, true, false).shadowMode())
                .as("global shadow mode goes with either semantics")
                .isTrue();
    }

    /**
     * RUNTIME_WATCH_ROOT true (envoy's default) keeps RUNTIME_ROOT in the path, so that a swap of its symlink is seen;
     * false resolves it once, at startup, as envoy then watches the directory it found.
     */
    @Test
    void runtimeWatchRootDecidesWhetherTheRootSymlinkIsFollowed(@TempDir Path dir) throws IOException {
        Path v1 = Files.createDirectories(dir.resolve("v1/ratelimit/config"))
                .getParent()
                .getParent();
        Path current = Files.createSymbolicLink(dir.resolve("current"), v1);
        Map<String, String> env = new HashMap<>(
                Map.of("RUNTIME_ROOT", current.toString(), "RUNTIME_SUBDIRECTORY", "ratelimit", "REDIS_URL", "r:1"));
        assertThat(parse(env).config).containsExactly(current.resolve("ratelimit/config"));
        env.put("RUNTIME_WATCH_ROOT", "false");
        assertThat(parse(env).config).containsExactly(v1.toRealPath().resolve("ratelimit/config"));
        env.put("RUNTIME_WATCH_ROOT", "maybe");
        assertThat(refusals(env)).containsExactly("RUNTIME_WATCH_ROOT 'maybe' is not a boolean: write true or false");
        assertThat(refusals(Map.of("RUNTIME_SUBDIRECTORY", "ratelimit")))
                .singleElement()
                .asString()
                .startsWith("RUNTIME_SUBDIRECTORY is set without RUNTIME_ROOT");
    }

    @Test
    void aRefusedVariableStopsTheStartWithExitCode2AndALineNamingIt() {
        Started started = serve(Map.of("TRACING_ENABLED", "true", "GRPC_UDS", "/tmp/rl.sock"));
        assertThat(started.exitCode()).isEqualTo(2);
        assertThat(started.stderr().lines().filter(l -> l.contains("event=start_refused")))
                .hasSize(2)
                .anySatisfy(l -> assertThat(l)
                        .contains("variable=TRACING_ENABLED")
                        .contains("TRACING_ENABLED=true is not supported: no traces are exported"))
                .anySatisfy(l -> assertThat(l).contains("variable=GRPC_UDS").contains("set GRPC_HOST and GRPC_PORT"));
    }
}
