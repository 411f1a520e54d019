package dev.sluice.server.stats;

import dev.sluice.Scheduler;
import dev.sluice.server.config.Durations;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Where {@link EnvoyStats} go, as {@code sluice serve}'s stats options say: a statsd collector ({@code --statsd},
 * off by default), envoy's Prometheus names on an address of their own ({@code --prometheus}, off by default), both,
 * or neither (the counters are kept all the same, for whoever reads them in the process).
 *
 * @param stats          the counters, and their near-limit ratio
 * @param statsd         the collector, or null for none
 * @param protocol       statsd's transport
 * @param flushInterval  how often statsd is sent what grew
 * @param prometheus     where envoy's Prometheus names are served, or null for nowhere
 * @param prometheusPath their path there
 * @param scheduler      whose time the flushes keep
 * @param flushesOn      where flushes run instead of a thread of their own (tests), or null
 */
public record StatsSinks(
        EnvoyStats stats,
        @Nullable InetSocketAddress statsd,
        StatsdSink.Protocol protocol,
        Duration flushInterval,
        @Nullable InetSocketAddress prometheus,
        String prometheusPath,
        Scheduler scheduler,
        @Nullable Executor flushesOn) {

    /** envoy's {@code STATS_FLUSH_INTERVAL} default. */
    public static final Duration DEFAULT_FLUSH_INTERVAL = Duration.ofSeconds(10);

    /** envoy's {@code PROMETHEUS_PATH} default. */
    public static final String DEFAULT_PROMETHEUS_PATH = "/metrics";

    /** Counting with envoy's defaults, sent nowhere. */
    public static StatsSinks none() {
        return new StatsSinks(
                new EnvoyStats(),
                null,
                StatsdSink.Protocol.TCP,
                DEFAULT_FLUSH_INTERVAL,
                null,
                DEFAULT_PROMETHEUS_PATH,
                Scheduler.system(),
                null);
    }

    /** The sinks running; {@link #close()} stops them. */
    public static final class Started implements AutoCloseable {
        private final @Nullable StatsdSink statsd;
        private final @Nullable EnvoyPrometheus prometheus;

        private Started(@Nullable StatsdSink statsd, @Nullable EnvoyPrometheus prometheus) {
            this.statsd = statsd;
            this.prometheus = prometheus;
        }

        public @Nullable StatsdSink statsd() {
            return statsd;
        }

        /** What runs, for the banner: {@code statsd tcp://… every 10s · Prometheus http://…/metrics}, or null. */
        public @Nullable String describe() {
            StringBuilder b = new StringBuilder();
            if (statsd != null) {
                b.append("statsd ")
                        .append(statsd.where())
                        .append(" every ")
                        .append(Durations.format(statsd.flushInterval()));
            }
            if (prometheus != null) {
                InetSocketAddress a = prometheus.address();
                b.append(b.length() > 0 ? " · " : "")
                        .append("Prometheus http://")
                        .append(a.getHostString())
                        .append(':')
                        .append(a.getPort())
                        .append(prometheus.path());
            }
            return b.length() == 0 ? null : b + "   (envoyproxy/ratelimit's stats, under its names)";
        }

        /** The address envoy's Prometheus names are served on, or null. */
        public @Nullable InetSocketAddress prometheusAddress() {
            return prometheus == null ? null : prometheus.address();
        }

        @Override
        public void close() {
            if (prometheus != null) {
                prometheus.close();
            }
            if (statsd != null) {
                statsd.close();
            }
        }
    }

    /**
     * Starts the sinks asked for.
     *
     * @throws IOException when the Prometheus address cannot be bound (nothing is left running)
     */
    public Started start() throws IOException {
        EnvoyPrometheus p = prometheus == null ? null : EnvoyPrometheus.listen(stats, prometheus, prometheusPath);
        StatsdSink s =
                statsd == null ? null : new StatsdSink(stats, statsd, protocol, flushInterval, scheduler, flushesOn);
        return new Started(s, p);
    }
}
