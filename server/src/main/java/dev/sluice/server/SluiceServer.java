package dev.sluice.server;

import dev.sluice.RateLimiter;
import dev.sluice.Scheduler;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.envoy.RlsService;
import dev.sluice.server.grpc.GrpcServer;
import dev.sluice.server.http.HttpServer;
import dev.sluice.server.http.HttpTransport;
import dev.sluice.server.stats.StatsSinks;
import dev.sluice.store.TimeBudget;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running service: rules, store, HTTP and gRPC endpoints and the rules watcher, started together and
 * stopped together. {@link #close()} is the graceful shutdown: stop accepting, let in-flight requests finish
 * within the grace period, then close the store.
 */
public final class SluiceServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SluiceServer.class);

    private final DecisionService service;
    /** Each null when not started: HTTP or gRPC off, no files to watch, a store without health. */
    private final @Nullable HttpServer http;

    private final @Nullable GrpcServer grpc;
    private final @Nullable RulesWatcher watcher;
    private final @Nullable StoreWatch storeWatch;
    private final StatsSinks.@Nullable Started sinks;
    private final Duration grace;

    private SluiceServer(
            DecisionService service,
            @Nullable HttpServer http,
            @Nullable GrpcServer grpc,
            @Nullable RulesWatcher watcher,
            @Nullable StoreWatch storeWatch,
            StatsSinks.@Nullable Started sinks,
            Duration grace) {
        this.service = service;
        this.http = http;
        this.grpc = grpc;
        this.watcher = watcher;
        this.storeWatch = storeWatch;
        this.sinks = sinks;
        this.grace = grace;
    }

    /**
     * Everything {@code sluice serve} can be told.
     *
     * @param http          HTTP address, or null for none
     * @param grpc          gRPC address, or null for none
     * @param configPaths   files/directories to watch for hot reload (empty: no reload)
     * @param envoy         how the Envoy APIs (gRPC and {@code POST /json}) answer
     * @param storeTimeout  the store's time budget per call; the service gives up on a request itself (503
     *                      {@code store-timeout}) after one budget per store call the request makes plus
     *                      {@value DecisionService#DEADLINE_SLACK_MILLIS} ms
     */
    public record Settings(
            @Nullable InetSocketAddress http,
            @Nullable InetSocketAddress grpc,
            RuleSet rules,
            List<Path> configPaths,
            Duration reloadInterval,
            RateLimiter limiter,
            String storeName,
            Duration storeTimeout,
            int maxBodyBytes,
            int maxDescriptors,
            Duration readTimeout,
            Duration idleTimeout,
            @Nullable String bearerToken,
            Duration shutdownGrace,
            EnvoyOptions envoy) {

        /** Defaults around a limiter and rules: loopback, ephemeral ports, the documented limits. */
        public static Settings defaults(RateLimiter limiter, RuleSet rules) {
            return new Settings(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    rules,
                    List.of(),
                    Duration.ofSeconds(2),
                    limiter,
                    "memory",
                    TimeBudget.DEFAULT,
                    64 * 1024,
                    64,
                    Duration.ofSeconds(10),
                    Duration.ofSeconds(60),
                    null,
                    Duration.ofSeconds(10),
                    EnvoyOptions.defaults());
        }

        public Settings withHttp(@Nullable InetSocketAddress a) {
            return new Settings(
                    a,
                    grpc,
                    rules,
                    configPaths,
                    reloadInterval,
                    limiter,
                    storeName,
                    storeTimeout,
                    maxBodyBytes,
                    maxDescriptors,
                    readTimeout,
                    idleTimeout,
                    bearerToken,
                    shutdownGrace,
                    envoy);
        }

        public Settings withGrpc(@Nullable InetSocketAddress a) {
            return new Settings(
                    http,
                    a,
                    rules,
                    configPaths,
                    reloadInterval,
                    limiter,
                    storeName,
                    storeTimeout,
                    maxBodyBytes,
                    maxDescriptors,
                    readTimeout,
                    idleTimeout,
                    bearerToken,
                    shutdownGrace,
                    envoy);
        }

        public Settings withConfigPaths(List<Path> p, Duration interval) {
            return new Settings(
                    http,
                    grpc,
                    rules,
                    p,
                    interval,
                    limiter,
                    storeName,
                    storeTimeout,
                    maxBodyBytes,
                    maxDescriptors,
                    readTimeout,
                    idleTimeout,
                    bearerToken,
                    shutdownGrace,
                    envoy);
        }

        public Settings withToken(@Nullable String t) {
            return new Settings(
                    http,
                    grpc,
                    rules,
                    configPaths,
                    reloadInterval,
                    limiter,
                    storeName,
                    storeTimeout,
                    maxBodyBytes,
                    maxDescriptors,
                    readTimeout,
                    idleTimeout,
                    t,
                    shutdownGrace,
                    envoy);
        }

        public Settings withLimits(int bodyBytes, int descriptors, Duration read, Duration idle) {
            return new Settings(
                    http,
                    grpc,
                    rules,
                    configPaths,
                    reloadInterval,
                    limiter,
                    storeName,
                    storeTimeout,
                    bodyBytes,
                    descriptors,
                    read,
                    idle,
                    bearerToken,
                    shutdownGrace,
                    envoy);
        }

        public Settings withEnvoy(EnvoyOptions e) {
            return new Settings(
                    http,
                    grpc,
                    rules,
                    configPaths,
                    reloadInterval,
                    limiter,
                    storeName,
                    storeTimeout,
                    maxBodyBytes,
                    maxDescriptors,
                    readTimeout,
                    idleTimeout,
                    bearerToken,
                    shutdownGrace,
                    e);
        }

        public Settings withStore(RateLimiter l, String name, Duration timeout) {
            return new Settings(
                    http,
                    grpc,
                    rules,
                    configPaths,
                    reloadInterval,
                    l,
                    name,
                    timeout,
                    maxBodyBytes,
                    maxDescriptors,
                    readTimeout,
                    idleTimeout,
                    bearerToken,
                    shutdownGrace,
                    envoy);
        }
    }

    public static SluiceServer start(Settings s) throws IOException, InterruptedException {
        return start(s, 1024, 0);
    }

    /**
     * Starts with a bound on the distinct limits callers may send (0 refuses caller-sent limits) and a number of
     * HTTP event-loop threads (0: one per core).
     *
     * @throws CannotListenException when the HTTP or gRPC address cannot be bound (nothing is left running)
     */
    public static SluiceServer start(Settings s, int maxClientLimits, int httpThreads)
            throws IOException, InterruptedException {
        return start(s, maxClientLimits, httpThreads, true);
    }

    /**
     * As {@link #start(Settings, int, int)}, with gRPC server reflection on or off ({@code sluice serve
     * --grpc-reflection=false}).
     */
    public static SluiceServer start(Settings s, int maxClientLimits, int httpThreads, boolean grpcReflection)
            throws IOException, InterruptedException {
        return start(s, maxClientLimits, httpThreads, HttpTransport.AUTO, grpcReflection, StatsSinks.none());
    }

    /**
     * As {@link #start(Settings, int, int, boolean)}, with the HTTP endpoint's transport ({@code sluice serve
     * --http-transport}) and envoy's stats counted as {@code stats} says and sent where it says ({@code sluice serve
     * --statsd}, {@code --prometheus}); stopped by {@link #close()}.
     *
     * @throws CannotListenException also when envoy's Prometheus address cannot be bound ({@code "prometheus"})
     */
    public static SluiceServer start(
            Settings s,
            int maxClientLimits,
            int httpThreads,
            HttpTransport httpTransport,
            boolean grpcReflection,
            StatsSinks stats)
            throws IOException, InterruptedException {
        ServerMetrics metrics = new ServerMetrics(stats.stats());
        stats.stats().configLoad(true); // the rules it starts with: envoy counts its first load too
        DecisionService service = new DecisionService(
                s.limiter(), s.storeName(), s.rules(), s.storeTimeout().toNanos(), s.maxDescriptors(), metrics);
        service.maxClientLimits(maxClientLimits);
        metrics.store(s.storeName(), service.storeHealth());
        RlsService rls = new RlsService(service, s.envoy());
        HttpServer http = null;
        GrpcServer grpc = null;
        RulesWatcher watcher = null;
        StatsSinks.Started sinks = null;
        String binding = null; // the endpoint being bound, for the error that names it
        try {
            if (s.http() != null) {
                binding = "http";
                http = HttpServer.start(
                        s.http(),
                        service,
                        rls,
                        new HttpServer.Options(
                                s.maxBodyBytes(),
                                s.readTimeout(),
                                s.idleTimeout(),
                                s.bearerToken(),
                                httpThreads,
                                httpTransport));
            }
            if (s.grpc() != null) {
                binding = "grpc";
                grpc = GrpcServer.start(
                        s.grpc(), service, rls, s.maxBodyBytes(), s.bearerToken(), s.idleTimeout(), grpcReflection);
            }
            binding = "prometheus";
            sinks = stats.start();
            binding = null;
            if (!s.configPaths().isEmpty()) {
                watcher = new RulesWatcher(s.configPaths(), service, s.reloadInterval(), Scheduler.system());
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (http != null) {
                http.stop(Duration.ZERO);
            }
            if (grpc != null) {
                grpc.stop(Duration.ZERO);
            }
            if (sinks != null) {
                sinks.close();
            }
            if (binding != null && e instanceof IOException) { // Netty's bind rethrows the OS's error unchecked
                InetSocketAddress address = Objects.requireNonNull(
                        "http".equals(binding) ? s.http() : "grpc".equals(binding) ? s.grpc() : stats.prometheus(),
                        "the endpoint being bound has an address");
                throw new CannotListenException(binding, address, e);
            }
            throw e;
        }
        StoreWatch storeWatch = null;
        if (service.storeHealth().isPresent()) {
            GrpcServer g = grpc;
            storeWatch = new StoreWatch(service, g == null ? healthy -> {} : g::serving, Scheduler.system());
        }
        return new SluiceServer(service, http, grpc, watcher, storeWatch, sinks, s.shutdownGrace());
    }

    public DecisionService service() {
        return service;
    }

    /** The stats sinks ({@code --statsd}, {@code --prometheus}: each null when not asked for); null before start. */
    public StatsSinks.@Nullable Started statsSinks() {
        return sinks;
    }

    /** The HTTP address actually bound, or null. */
    public @Nullable InetSocketAddress httpAddress() {
        return http == null ? null : http.address();
    }

    /** The HTTP endpoint's transport ({@code --http-transport} resolved), or null without HTTP. */
    public @Nullable HttpTransport httpTransport() {
        return http == null ? null : http.transport();
    }

    /** The gRPC address actually bound, or null. */
    public @Nullable InetSocketAddress grpcAddress() {
        return grpc == null ? null : grpc.address();
    }

    /** Reloads the rules from the configured paths now; false (old rules kept) when they are invalid. */
    public boolean reload() {
        return watcher != null && watcher.reload();
    }

    @Override
    public void close() {
        log.atInfo()
                .addKeyValue("event", "shutdown_started")
                .addKeyValue("grace", grace)
                .log();
        if (watcher != null) {
            watcher.close();
        }
        if (storeWatch != null) {
            storeWatch.close();
        }
        if (http != null) {
            http.stop(grace);
        }
        if (grpc != null) {
            grpc.stop(grace);
        }
        if (sinks != null) {
            sinks.close(); // after the last decisions: their stats are in its last flush
        }
        service.limiter().close();
        log.atInfo().addKeyValue("event", "shutdown_finished").log();
    }
}
