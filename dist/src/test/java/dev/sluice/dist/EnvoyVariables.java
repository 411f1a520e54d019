package dev.sluice.dist;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The envoyproxy/ratelimit environment variables that {@code dist/kubernetes/sluice.yaml} sets, in one place, with
 * what {@code sluice serve} does with each: the flags of {@code serve} that each stands for, or the behaviour the
 * service has without a flag that the value must name. A variable the manifests set that is not here fails the test:
 * the manifests may name only what the service reads.
 *
 * <p>The service reads envoy's environment itself ({@code server/cli/EnvoyEnvironment}, with envoy's table of
 * variables and defaults): the test runs the manifest's command with the manifest's environment, and adds these flags,
 * which win over it, so that {@code ContainerCommand} can put each address and path where the test runs it.
 */
final class EnvoyVariables {
    private EnvoyVariables() {}

    /** Every variable the manifests may set. */
    static final Set<String> NAMES = Set.of(
            "HOST",
            "PORT",
            "GRPC_HOST",
            "GRPC_PORT",
            "RUNTIME_ROOT",
            "RUNTIME_SUBDIRECTORY",
            "RUNTIME_IGNOREDOTFILES",
            "LOG_LEVEL",
            "LOG_FORMAT",
            "BACKEND_TYPE",
            "REDIS_SOCKET_TYPE",
            "REDIS_TYPE",
            "REDIS_URL",
            "USE_STATSD");

    /**
     * The flags of {@code serve} that {@code env} (a container's environment, envoy's variables) stands for, with
     * envoy's defaults for those it leaves out (envoy's {@code src/settings/settings.go}).
     *
     * @throws AssertionError for a variable the service does not read, or a value it does not support
     */
    static List<String> flags(Map<String, String> env) {
        for (String name : env.keySet()) {
            if (!NAMES.contains(name)) {
                throw new AssertionError("the manifest sets " + name + ", which sluice serve does not read; it reads "
                        + NAMES.stream().sorted().toList());
            }
        }
        List<String> flags = new ArrayList<>();
        flags.addAll(List.of("--http", env.getOrDefault("HOST", "0.0.0.0") + ":" + env.getOrDefault("PORT", "8080")));
        flags.addAll(List.of(
                "--grpc", env.getOrDefault("GRPC_HOST", "0.0.0.0") + ":" + env.getOrDefault("GRPC_PORT", "8081")));
        // envoy's debug port (6070 on all interfaces where RUNTIME_ROOT is set) is no port of the container's: the
        // Service does not expose it (kubectl port-forward reaches it), and the test, which has no such port, turns it
        // off
        flags.addAll(List.of("--debug", "off"));
        String root = env.getOrDefault("RUNTIME_ROOT", "/srv/runtime_data/current");
        String sub = env.getOrDefault("RUNTIME_SUBDIRECTORY", "");
        flags.addAll(List.of("--config", root + (sub.isEmpty() ? "" : "/" + sub) + "/config"));
        // the service always skips dot files in a rules directory (RuleSet), as envoy does with this set
        must(env, "RUNTIME_IGNOREDOTFILES", "true");
        if (env.containsKey("LOG_LEVEL")) {
            flags.addAll(List.of("--log-level", env.get("LOG_LEVEL").toLowerCase(Locale.ROOT)));
        }
        // LOG_FORMAT: read by serve itself (the default of --log-format), so it is passed on as it is
        must(env, "BACKEND_TYPE", "redis");
        must(env, "REDIS_SOCKET_TYPE", "tcp");
        must(env, "REDIS_TYPE", "single"); // sentinel, cluster: EnvoyEnvironment's (redis-sentinel://, a list)
        if (env.containsKey("REDIS_URL")) {
            flags.addAll(List.of("--store", "redis://" + env.get("REDIS_URL")));
        }
        must(env, "USE_STATSD", "false"); // the example runs no statsd collector
        return flags;
    }

    private static void must(Map<String, String> env, String name, String value) {
        String v = env.get(name);
        if (v != null && !v.equalsIgnoreCase(value)) {
            throw new AssertionError(
                    name + "=" + v + " in the manifest: the service supports " + name + "=" + value + " here");
        }
    }
}
