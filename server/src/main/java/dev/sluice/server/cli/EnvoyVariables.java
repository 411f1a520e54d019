package dev.sluice.server.cli;

import dev.sluice.server.cli.EnvoyEnvironment.Row;
import dev.sluice.server.cli.EnvoyEnvironment.Use;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The table: every variable of envoyproxy/ratelimit's {@code settings.go} (and {@code STATSD_PROTOCOL}, which its
 * stats library reads), in settings.go's order, with what {@code sluice serve} does with it ({@link EnvoyEnvironment}
 * reads it). EnvoyEnvironmentTest checks that no variable of envoy's is missing.
 *
 */
final class EnvoyVariables {
    private EnvoyVariables() {}

    private static final String NO_TLS = "the gRPC listener is plaintext: terminate TLS in front of it (a sidecar or "
            + "the mesh), as Envoy's own proxy usually does";
    private static final String NO_XDS = "rules come from files: RUNTIME_ROOT, or --config";
    private static final String STATS = "envoy's stats go to statsd (USE_STATSD) or Prometheus (USE_PROMETHEUS) under "
            + "envoy's default names; Sluice's own metrics are at GET /metrics on the HTTP port";
    private static final String NO_PER_SECOND = "one Redis decides every limit here: unset REDIS_PERSECOND (Sluice "
            + "takes one EVALSHA per batch of decisions, so a second Redis for per-second limits is not needed)";
    private static final String NO_MEMCACHE = "Sluice's stores are Redis, PostgreSQL and memory";
    private static final String NO_TRACING = "no traces are exported: unset TRACING_ENABLED";
    private static final String RECONNECTS = "the store connects in the background and reconnects with a backoff of "
            + "1 s to 30 s, answering by --failure-policy meanwhile; a misconfigured one stops the start";

    static final Map<String, Row> ROWS = table(
            sets("HOST", "--http"),
            sets("PORT", "--http"),
            sets("DEBUG_HOST", "--debug"),
            sets("DEBUG_PORT", "--debug"),
            refused("GRPC_UDS", "gRPC listens on TCP: set GRPC_HOST and GRPC_PORT"),
            sets("GRPC_HOST", "--grpc"),
            sets("GRPC_PORT", "--grpc"),
            refused("GRPC_MAX_CONNECTION_AGE", "connections are closed when idle (--idle-timeout), not by age"),
            refused("GRPC_MAX_CONNECTION_AGE_GRACE", "connections are closed when idle (--idle-timeout), not by age"),
            refused("GRPC_SERVER_USE_TLS", NO_TLS, "false"),
            refused("GRPC_SERVER_TLS_CERT", NO_TLS),
            refused("GRPC_SERVER_TLS_KEY", NO_TLS),
            refused("GRPC_CLIENT_TLS_CACERT", NO_TLS),
            refused("GRPC_CLIENT_TLS_SAN", NO_TLS),
            sets("LOG_LEVEL", "--log-level"),
            sets("LOG_FORMAT", "--log-format"),
            refused("CONFIG_TYPE", NO_XDS, "file"),
            refused("FORCE_START_WITHOUT_INITIAL_CONFIG", "the service starts only with valid rules", "false"),
            xds("CONFIG_GRPC_XDS_NODE_ID"),
            xds("CONFIG_GRPC_XDS_NODE_METADATA"),
            xds("CONFIG_GRPC_XDS_SERVER_URL"),
            xds("CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL"),
            xds("CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS"),
            xds("CONFIG_GRPC_XDS_SERVER_USE_TLS"),
            xds("CONFIG_GRPC_XDS_CLIENT_TLS_CERT"),
            xds("CONFIG_GRPC_XDS_CLIENT_TLS_KEY"),
            xds("CONFIG_GRPC_XDS_SERVER_TLS_CACERT"),
            xds("CONFIG_GRPC_XDS_SERVER_TLS_SAN"),
            xds("XDS_CLIENT_BACKOFF_INITIAL_INTERVAL"),
            xds("XDS_CLIENT_BACKOFF_MAX_INTERVAL"),
            xds("XDS_CLIENT_BACKOFF_RANDOM_FACTOR"),
            xds("XDS_CLIENT_BACKOFF_JITTER"),
            xds("XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES"),
            refused("USE_DOG_STATSD", "DogStatsD tags are not sent: " + STATS, "false"),
            onlyWith(refused("USE_DOG_STATSD_MOGRIFIERS", STATS), "USE_DOG_STATSD", "true"),
            sets("USE_STATSD", "--statsd"),
            sets("STATSD_HOST", "--statsd"),
            sets("STATSD_PORT", "--statsd"),
            sets("STATSD_PROTOCOL", "--statsd-protocol"),
            refused("EXTRA_TAGS", "stats carry no extra tags: " + STATS),
            sets("STATS_FLUSH_INTERVAL", "--stats-flush-interval"),
            refused("DISABLE_STATS", "GET /metrics on the HTTP port always answers; nothing is pushed", "false"),
            sets("USE_PROMETHEUS", "--prometheus"),
            sets("PROMETHEUS_ADDR", "--prometheus"),
            sets("PROMETHEUS_PATH", "--prometheus-path"),
            refused("PROMETHEUS_MAPPER_YAML", "the metrics' names are fixed: " + STATS),
            refused("PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS", "durations are in seconds, as Prometheus's", "false"),
            sets("RUNTIME_ROOT", "--config"),
            sets("RUNTIME_SUBDIRECTORY", "--config"),
            sets("RUNTIME_APPDIRECTORY", "--config"),
            noEffect(
                    "RUNTIME_IGNOREDOTFILES",
                    "dot files are always skipped (as envoy's RUNTIME_IGNOREDOTFILES=true), and so are files not "
                            + "named *.yaml or *.yml"),
            sets("RUNTIME_WATCH_ROOT", "--config"),
            noEffect(
                    "EXPIRATION_JITTER_MAX_SECONDS",
                    "a key expires when its state equals a fresh key's (PEXPIRE to its reset), never earlier, so "
                            + "expiries need no jitter"),
            noEffect(
                    "LOCAL_CACHE_SIZE_IN_BYTES",
                    "every decision is the store's; the answers are the same as with envoy's over-limit cache. "
                            + "--leases decides hot keys here, exactly"),
            sets("NEAR_LIMIT_RATIO", "--near-limit-ratio"),
            refused("CACHE_KEY_PREFIX", "Redis keys are Sluice's own (prefix 'sluice:'); envoy's keys are not shared"),
            sets("BACKEND_TYPE", "--store"),
            sets("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", "--semantics"),
            sets("LIMIT_RESPONSE_HEADERS_ENABLED", "--rls-response-headers"),
            refused("LIMIT_LIMIT_HEADER", "the header names are envoy's defaults", "ratelimit-limit"),
            refused("LIMIT_REMAINING_HEADER", "the header names are envoy's defaults", "ratelimit-remaining"),
            refused("LIMIT_RESET_HEADER", "the header names are envoy's defaults", "ratelimit-reset"),
            noEffect(
                    "HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED",
                    "the service starts only with valid rules, so /healthcheck always has rules loaded"),
            sets("REDIS_SOCKET_TYPE", "--store"),
            sets("REDIS_TYPE", "--store"),
            sets("REDIS_URL", "--store"),
            noEffect("REDIS_POOL_SIZE", "Lettuce pipelines every call over one connection: there is no pool to size"),
            sets("REDIS_AUTH", "--store"),
            sets("REDIS_TLS", "--store"),
            refused("REDIS_TLS_CLIENT_CERT", "TLS to Redis uses the JVM's trust store and no client certificate"),
            refused("REDIS_TLS_CLIENT_KEY", "TLS to Redis uses the JVM's trust store and no client certificate"),
            refused("REDIS_TLS_CACERT", "TLS to Redis uses the JVM's trust store (javax.net.ssl.trustStore)"),
            refused("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", "Redis's certificate is always verified", "false"),
            noEffect(
                    "REDIS_PIPELINE_WINDOW",
                    "concurrent decisions share one EVALSHA (batching, always on) and a lone one never waits for a "
                            + "window"),
            noEffect("REDIS_PIPELINE_LIMIT", "unused by envoy too (radix v4); batches are bounded by Sluice"),
            noEffect("REDIS_CLUSTER_PIPELINE_PARALLELISM", "each cluster node gets its own batches, in parallel"),
            refused("REDIS_PERSECOND", NO_PER_SECOND, "false"),
            perSecond("REDIS_PERSECOND_SOCKET_TYPE"),
            perSecond("REDIS_PERSECOND_TYPE"),
            perSecond("REDIS_PERSECOND_URL"),
            perSecond("REDIS_PERSECOND_POOL_SIZE"),
            perSecond("REDIS_PERSECOND_AUTH"),
            perSecond("REDIS_PERSECOND_TLS"),
            onlyWith(
                    refused(
                            "REDIS_SENTINEL_AUTH",
                            "sentinels are asked without a password (Lettuce's redis-sentinel:// URL carries the "
                                    + "data nodes' password, REDIS_AUTH): unset it, or pass --store"),
                    "REDIS_TYPE",
                    "sentinel"),
            perSecond("REDIS_PERSECOND_SENTINEL_AUTH"),
            perSecond("REDIS_PERSECOND_PIPELINE_WINDOW"),
            perSecond("REDIS_PERSECOND_PIPELINE_LIMIT"),
            perSecond("REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM"),
            noEffect(
                    "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION",
                    "/healthcheck and /readyz always report the store's health"),
            noEffect(
                    "REDIS_TIMEOUT",
                    "each decision has a time budget of its own, --store-timeout (1 s by default), past which "
                            + "--failure-policy answers"),
            perSecond("REDIS_PERSECOND_TIMEOUT"),
            refused("REDIS_POOL_ON_EMPTY_BEHAVIOR", "there is no pool to wait on (one pipelined connection)", "wait"),
            perSecond("REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR"),
            noEffect("REDIS_STARTUP_INITIAL_INTERVAL", RECONNECTS),
            noEffect("REDIS_STARTUP_MAX_INTERVAL", RECONNECTS),
            noEffect("REDIS_STARTUP_MAX_ELAPSED_TIME", RECONNECTS),
            memcache("MEMCACHE_HOST_PORT"),
            memcache("MEMCACHE_MAX_IDLE_CONNS"),
            memcache("MEMCACHE_SRV"),
            memcache("MEMCACHE_SRV_REFRESH"),
            memcache("MEMCACHE_TLS"),
            memcache("MEMCACHE_TLS_CLIENT_CERT"),
            memcache("MEMCACHE_TLS_CLIENT_KEY"),
            memcache("MEMCACHE_TLS_CACERT"),
            memcache("MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION"),
            sets("SHADOW_MODE", "--shadow-mode"),
            sets("QUOTA_MODE", "--quota-mode"),
            sets("RESPONSE_DYNAMIC_METADATA", "--rls-dynamic-metadata"),
            refused(
                    "MERGE_DOMAIN_CONFIG",
                    "each domain lives in one file: merge the files that share a domain into one",
                    "false"),
            refused("TRACING_ENABLED", NO_TRACING, "false"),
            tracing("TRACING_SERVICE_NAME"),
            tracing("TRACING_SERVICE_NAMESPACE"),
            tracing("TRACING_SERVICE_INSTANCE_ID"),
            tracing("TRACING_EXPORTER_PROTOCOL"),
            tracing("TRACING_SAMPLING_RATE"));

    private static Map<String, Row> table(Row... rows) {
        Map<String, Row> m = new LinkedHashMap<>();
        for (Row r : rows) {
            if (m.put(r.variable(), r) != null) {
                throw new IllegalStateException(r.variable() + " has two rows");
            }
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    /** Sets {@code option} ({@link EnvoyEnvironment#OPTIONS} says how). */
    private static Row sets(String variable, String option) {
        return new Row(variable, Use.SETS, option, Set.of(), "", null, null);
    }

    /** Refused unless its value is one of {@code accepted} (in lower case, booleans as {@code true}/{@code false}). */
    private static Row refused(String variable, String reason, String... accepted) {
        return new Row(
                variable, accepted.length > 0 ? Use.ACCEPTS : Use.REFUSED, null, Set.of(accepted), reason, null, null);
    }

    private static Row noEffect(String variable, String reason) {
        return new Row(
                variable, Use.NO_EFFECT, null, Set.of(), variable + " has no effect here: " + reason, null, null);
    }

    /** {@code row}, inert (as in envoy) unless {@code variable} is {@code value}. */
    private static Row onlyWith(Row row, String variable, String value) {
        return new Row(row.variable(), row.use(), row.option(), row.accepted(), row.reason(), variable, value);
    }

    private static Row xds(String variable) {
        return onlyWith(refused(variable, NO_XDS), "CONFIG_TYPE", "grpc_xds_sotw");
    }

    private static Row perSecond(String variable) {
        return onlyWith(refused(variable, NO_PER_SECOND), "REDIS_PERSECOND", "true");
    }

    private static Row memcache(String variable) {
        return onlyWith(refused(variable, NO_MEMCACHE), "BACKEND_TYPE", "memcache");
    }

    private static Row tracing(String variable) {
        return onlyWith(refused(variable, NO_TRACING), "TRACING_ENABLED", "true");
    }
}
