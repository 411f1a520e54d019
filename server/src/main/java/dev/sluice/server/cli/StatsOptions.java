package dev.sluice.server.cli;

import dev.sluice.Scheduler;
import dev.sluice.server.config.Durations;
import dev.sluice.server.stats.EnvoyStats;
import dev.sluice.server.stats.StatsSinks;
import dev.sluice.server.stats.StatsdSink;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * {@code sluice serve}'s options for envoyproxy/ratelimit's stats (a picocli mixin): where they go (statsd,
 * envoy's Prometheus names) and how they count ({@code --near-limit-ratio}). envoy's environment variables map onto
 * them: {@code USE_STATSD}/{@code STATSD_HOST}/{@code STATSD_PORT} onto {@code --statsd}, gostats'
 * {@code STATSD_PROTOCOL} onto {@code --statsd-protocol}, {@code STATS_FLUSH_INTERVAL},
 * {@code NEAR_LIMIT_RATIO}, {@code USE_PROMETHEUS}/{@code PROMETHEUS_ADDR} onto {@code --prometheus},
 * {@code PROMETHEUS_PATH}.
 */
final class StatsOptions {
    @Option(
            names = "--statsd",
            paramLabel = "HOST:PORT",
            description = "Send envoyproxy/ratelimit's stats (ratelimit.service.rate_limit.<domain>.<key>.total_hits, "
                    + "…) to this statsd collector, e.g. 127.0.0.1:8125 (default off)")
    @Nullable
    String statsd;

    @Option(
            names = "--statsd-protocol",
            defaultValue = "tcp",
            paramLabel = "tcp|udp",
            description = "statsd's transport: tcp, as envoy's service sends it, or udp (default ${DEFAULT-VALUE})")
    String statsdProtocol = "tcp";

    @Option(
            names = "--stats-flush-interval",
            defaultValue = "10s",
            paramLabel = "DURATION",
            description = "How often statsd is sent what the stats counted since (default ${DEFAULT-VALUE})")
    String flushInterval = "10s";

    @Option(
            names = "--near-limit-ratio",
            defaultValue = "0.8",
            paramLabel = "R",
            description = "envoy's near_limit stat counts the hits past this share of a limit, in (0, 1] "
                    + "(default ${DEFAULT-VALUE})")
    String nearLimitRatio = "0.8";

    @Option(
            names = "--prometheus",
            paramLabel = "HOST:PORT",
            description = "Serve envoyproxy/ratelimit's stats under its Prometheus names "
                    + "(ratelimit_service_rate_limit_total_hits, …) on this address, e.g. 127.0.0.1:9090; the "
                    + "service's own sluice_* metrics stay on /metrics of --http (default off)")
    @Nullable
    String prometheus;

    @Option(
            names = "--prometheus-path",
            defaultValue = "/metrics",
            paramLabel = "PATH",
            description = "The path of --prometheus (default ${DEFAULT-VALUE})")
    String prometheusPath = "/metrics";

    private @Nullable StatsSinks sinks;

    /**
     * Checks every value; throws {@link IllegalArgumentException} naming the bad one and the fix.
     *
     * @return the sinks, to start with the server
     */
    StatsSinks check() {
        StatsSinks s = sinks;
        if (s != null) {
            return s;
        }
        StatsdSink.Protocol protocol = StatsdSink.Protocol.parse("--statsd-protocol", statsdProtocol);
        Duration every;
        try {
            every = Durations.parse(flushInterval);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--stats-flush-interval: " + e.getMessage(), e);
        }
        if (every.toMillis() < 1) {
            throw new IllegalArgumentException("--stats-flush-interval '" + flushInterval
                    + "' is shorter than a millisecond: give e.g. 10s (envoy's STATS_FLUSH_INTERVAL default)");
        }
        float ratio;
        try {
            ratio = Float.parseFloat(nearLimitRatio.trim());
        } catch (NumberFormatException e) {
            ratio = Float.NaN;
        }
        if (!(ratio > 0 && ratio <= 1)) {
            throw new IllegalArgumentException("--near-limit-ratio '" + nearLimitRatio
                    + "' is not a number in (0, 1]: give a share of the limit, e.g. 0.8 (envoy's default)");
        }
        if (!prometheusPath.startsWith("/") || prometheusPath.contains("?") || prometheusPath.contains("#")) {
            throw new IllegalArgumentException("--prometheus-path '" + prometheusPath
                    + "' is not a path: write one starting with '/', e.g. /metrics");
        }
        InetSocketAddress collector = Addresses.parse("--statsd", statsd);
        if (collector != null && collector.getPort() == 0) {
            throw new IllegalArgumentException(
                    "--statsd '" + statsd + "' has port 0: name the collector's port, e.g. 127.0.0.1:8125");
        }
        s = new StatsSinks(
                new EnvoyStats(ratio),
                collector,
                protocol,
                every,
                Addresses.parse("--prometheus", prometheus),
                prometheusPath,
                Scheduler.system(),
                null);
        sinks = s;
        return s;
    }

    /** The sinks {@link #check()} made; it must have been called. */
    StatsSinks sinks() {
        return Objects.requireNonNull(sinks, "check() first");
    }
}
