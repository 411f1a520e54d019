package dev.sluice.server.cli;

import dev.sluice.Degradation;
import dev.sluice.StoreException;
import dev.sluice.server.CannotListenException;
import dev.sluice.server.DebugPort;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.ConfigException;
import dev.sluice.server.config.Durations;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.config.Semantics;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.http.HttpTransport;
import dev.sluice.server.log.LogFormat;
import dev.sluice.server.log.Logging;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sluice serve}: run the decision service until SIGINT/SIGTERM, then shut down gracefully. */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        defaultValueProvider = EnvoyEnvironment.class,
        description = "Run the decision service (HTTP/JSON and Envoy RLS gRPC). envoyproxy/ratelimit's environment "
                + "variables (PORT, RUNTIME_ROOT, REDIS_URL, ...) set the options they match; a flag wins.")
final class ServeCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(ServeCommand.class);

    @Spec
    CommandSpec spec;

    @Mixin
    StoreOptions stores = new StoreOptions();

    @Mixin
    EnvoyApiOptions envoyApi = new EnvoyApiOptions();

    @Option(
            names = {"-c", "--config"},
            paramLabel = "FILE|DIR",
            description = "Rules files or directories of *.yaml (repeatable). Default: ./sluice.yaml if present, "
                    + "else the built-in example. Reloaded on change.")
    List<Path> config = new ArrayList<>();

    @Option(
            names = "--http",
            defaultValue = "127.0.0.1:8080",
            paramLabel = "HOST:PORT",
            description = "HTTP address (default ${DEFAULT-VALUE}; 0.0.0.0:8080 for all interfaces; off to disable)")
    String http;

    @Option(
            names = "--grpc",
            defaultValue = "127.0.0.1:8081",
            paramLabel = "HOST:PORT",
            description = "gRPC address (default ${DEFAULT-VALUE}; off to disable)")
    String grpc;

    @Option(
            names = "--debug",
            defaultValue = "off",
            paramLabel = "HOST:PORT",
            description = "envoy's debug port: GET /rlconfig (the rules as envoy prints them), /stats, /healthcheck "
                    + "(default ${DEFAULT-VALUE}; 0.0.0.0:6070 where RUNTIME_ROOT is set, as envoy's DEBUG_PORT)")
    String debug;

    @Option(
            names = "--grpc-reflection",
            arity = "0..1",
            defaultValue = "true",
            fallbackValue = "true",
            paramLabel = "true|false",
            description = "gRPC server reflection, so that grpcurl and other clients need no .proto files "
                    + "(default ${DEFAULT-VALUE}; --grpc-reflection=false to turn it off)")
    boolean grpcReflection;

    @Option(
            names = "--token",
            paramLabel = "TOKEN",
            defaultValue = "${env:SLUICE_TOKEN}",
            description = "Require 'Authorization: Bearer TOKEN' on /v1/* and gRPC (default: $SLUICE_TOKEN, else none)")
    @Nullable
    String token;

    @Option(names = "--token-file", paramLabel = "FILE", description = "Read the bearer token from a file")
    @Nullable
    Path tokenFile;

    @Option(
            names = "--max-body-bytes",
            defaultValue = "65536",
            description = "Largest request body (default ${DEFAULT-VALUE})")
    int maxBodyBytes;

    @Option(
            names = "--max-descriptors",
            defaultValue = "64",
            description = "Most descriptors per request (default ${DEFAULT-VALUE})")
    int maxDescriptors;

    @Option(
            names = "--read-timeout",
            defaultValue = "10s",
            description = "Time for a request body to arrive (default ${DEFAULT-VALUE})")
    String readTimeout;

    @Option(
            names = "--idle-timeout",
            defaultValue = "60s",
            description = "Idle keep-alive connections close after (default ${DEFAULT-VALUE})")
    String idleTimeout;

    @Mixin
    StatsOptions stats = new StatsOptions(); // envoy's stats: --statsd, --prometheus, --near-limit-ratio, …

    @Option(
            names = "--reload-interval",
            defaultValue = "2s",
            description = "How often rules files are checked for changes (default ${DEFAULT-VALUE})")
    String reloadInterval;

    @Option(
            names = "--max-client-limits",
            defaultValue = "1024",
            description =
                    "Most distinct limits callers may send in descriptors[].limit (RemoteRateLimiter does); 0 refuses them (default ${DEFAULT-VALUE})")
    int maxClientLimits;

    @Option(
            names = "--http-threads",
            defaultValue = "0",
            description = "HTTP event-loop threads; 0 = one per core (default ${DEFAULT-VALUE})")
    int httpThreads;

    @Option(
            names = "--http-transport",
            defaultValue = "auto",
            description =
                    "HTTP event loops' I/O: auto (io_uring, else epoll, else nio), io_uring, epoll or nio (default ${DEFAULT-VALUE})")
    String httpTransport;

    @Option(
            names = "--shutdown-grace",
            defaultValue = "10s",
            description = "Time in-flight requests get on shutdown (default ${DEFAULT-VALUE})")
    String shutdownGrace;

    @Option(
            names = "--log-format",
            paramLabel = "FORMAT",
            description = "Log lines on stderr: logfmt or json, one event a line, every library's too (default: "
                    + "$LOG_FORMAT, envoy's text being logfmt, else logfmt)")
    @Nullable
    String logFormat;

    @Option(
            names = "--log-level",
            paramLabel = "[LOGGER=]LEVEL",
            description = "trace, debug, info, warn, error or off: LEVEL for the root logger (every logger without a "
                    + "level of its own), LOGGER=LEVEL for one and those under it (e.g. io.lettuce=debug); repeatable "
                    + "(default: root at $SLUICE_LOG_LEVEL, else info; Netty and grpc-java at warn)")
    List<String> logLevels = new ArrayList<>();

    /**
     * Netty's sampled buffer-leak detection (its default, SIMPLE) costs the HTTP event loop ~0.5 µs of a ~4 µs check
     * (bench/server/README.md). The service is held leak-free by NoBufferLeaksTest, every request path under PARANOID
     * detection, so the process it owns runs without; {@code -Dio.netty.leakDetection.level=simple} (or
     * {@code io.grpc.netty.shaded.io.netty.leakDetection.level} for gRPC) keeps a level of one's choice.
     */
    static void leakDetectionOff() {
        if (System.getProperty("io.netty.leakDetection.level") == null
                && System.getProperty("io.netty.leakDetectionLevel") == null) {
            io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
        }
        if (System.getProperty("io.grpc.netty.shaded.io.netty.leakDetection.level") == null
                && System.getProperty("io.grpc.netty.shaded.io.netty.leakDetectionLevel") == null) {
            io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.setLevel(
                    io.grpc.netty.shaded.io.netty.util.ResourceLeakDetector.Level.DISABLED);
        }
    }

    @Override
    public Integer call() throws Exception {
        try {
            Logging.start(LogFormat.parse("--log-format (or $LOG_FORMAT)", logFormat));
            Logging.levels(logLevels);
        } catch (IllegalArgumentException e) {
            return refuse(2, e.getMessage()); // in the format asked for, or logfmt if that was the mistake
        }
        if (!environmentAccepted()) {
            return 2;
        }
        leakDetectionOff();
        List<Path> paths = new ArrayList<>(config);
        if (paths.isEmpty() && Files.isRegularFile(Path.of("sluice.yaml"))) {
            paths.add(Path.of("sluice.yaml"));
        }
        RuleSet rules;
        String rulesFrom;
        if (paths.isEmpty()) {
            rules = RuleSet.builtinExample();
            rulesFrom = "the built-in example (" + RuleSet.BUILTIN_EXAMPLE + "; pass --config to use your own)";
        } else {
            try {
                rules = RuleSet.load(paths);
            } catch (ConfigException e) {
                e.problems()
                        .forEach(p -> log.atError()
                                .addKeyValue("event", "rules_problem")
                                .addKeyValue("problem", p)
                                .log());
                return refuse(1, e.problems().size() + " problem(s) in the rules");
            }
            rulesFrom = paths.toString();
        }
        String bearer = token == null || token.isBlank() ? null : token.trim();
        if (tokenFile != null) {
            try {
                bearer = Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
            } catch (IOException e) {
                return refuse(2, "--token-file " + tokenFile + " cannot be read: " + e);
            }
        }
        Stores.Opened opened;
        EnvoyOptions envoy;
        InetSocketAddress httpAddress;
        InetSocketAddress grpcAddress;
        InetSocketAddress debugAddress;
        HttpTransport transport;
        try {
            transport = HttpTransport.fromConfigName(httpTransport).resolve();
            envoy = new EnvoyOptions(
                    Semantics.fromConfigName(envoyApi.semantics),
                    EnvoyOptions.Headers.fromConfigName(envoyApi.rlsResponseHeaders),
                    envoyApi.rlsDynamicMetadata,
                    envoyApi.shadowMode,
                    envoyApi.quotaMode);
            httpAddress = Addresses.parse("--http", http);
            grpcAddress = Addresses.parse("--grpc", grpc);
            stats.check();
            debugAddress = Addresses.parse("--debug", debug);
            opened = Stores.leased(
                    Stores.open(
                            stores.store,
                            stores.maxKeys,
                            stores.storeTimeout == null
                                    ? Stores.Budget.STORE_DEFAULT
                                    : Stores.Budget.of(Durations.parse(stores.storeTimeout)),
                            stores.poolSize,
                            Stores.policy(stores.failurePolicy),
                            stores.startDespiteMisconfiguredStore),
                    stores.leases);
        } catch (IllegalArgumentException e) {
            return refuse(2, e.getMessage());
        } catch (RuntimeException e) {
            if (e instanceof StoreException se && se.degradation() == Degradation.MISCONFIGURED) {
                // the store's message names its URL without the password, and its fix may quote a URL's form
                return refuse(
                        2,
                        e.getMessage() + ". To start anyway, answering by the failure policy until it is"
                                + " fixed, pass --start-despite-misconfigured-store");
            }
            return refuse(2, "cannot open the store " + Stores.redact(stores.store) + ": " + e.getMessage());
        }
        SluiceServer.Settings s0 = SluiceServer.Settings.defaults(opened.limiter(), rules);
        SluiceServer.Settings s = s0.withHttp(httpAddress)
                .withGrpc(grpcAddress)
                .withConfigPaths(paths, Durations.parse(reloadInterval))
                .withToken(bearer)
                .withLimits(maxBodyBytes, maxDescriptors, Durations.parse(readTimeout), Durations.parse(idleTimeout))
                .withStore(opened.limiter(), opened.name(), opened.budget().orElse(s0.storeTimeout()));
        s = new SluiceServer.Settings(
                s.http(),
                s.grpc(),
                s.rules(),
                s.configPaths(),
                s.reloadInterval(),
                s.limiter(),
                s.storeName(),
                s.storeTimeout(),
                s.maxBodyBytes(),
                s.maxDescriptors(),
                s.readTimeout(),
                s.idleTimeout(),
                s.bearerToken(),
                Durations.parse(shutdownGrace),
                envoy);
        SluiceServer server;
        try {
            server = SluiceServer.start(s, maxClientLimits, httpThreads, transport, grpcReflection, stats.sinks());
        } catch (CannotListenException e) {
            opened.close();
            return refuse(2, ServeBanner.cannotListen(e));
        }
        DebugPort debugPort;
        try {
            debugPort = debugAddress == null ? null : DebugPort.start(debugAddress, server.service());
        } catch (CannotListenException e) {
            server.close();
            return refuse(2, ServeBanner.cannotListen(e));
        }
        WarmUp.http(
                server.httpAddress(), bearer); // before it says it serves: the first client's call is not the cold one
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            if (debugPort != null) {
                                debugPort.close();
                            }
                            server.close();
                            opened.closeResources();
                            stopped.countDown();
                        },
                        "sluice-shutdown"));
        LoggingEventBuilder started =
                log.atInfo().addKeyValue("event", "started").addKeyValue("store", opened.name());
        Duration budget = opened.budget().orElse(null);
        if (budget != null) {
            started = started.addKeyValue("store_budget", budget)
                    .addKeyValue("failure_policy", Stores.policy(stores.failurePolicy));
        }
        started.addKeyValue("http", orOff(server.httpAddress()))
                .addKeyValue("http_transport", server.httpAddress() == null ? "off" : transport.configName())
                .addKeyValue("grpc", orOff(server.grpcAddress()))
                .addKeyValue("debug", debugPort == null ? "off" : debugPort.address())
                .addKeyValue("domains", rules.domains().keySet())
                .addKeyValue("rules", rules.ruleCount())
                .addKeyValue("auth", bearer != null ? "bearer" : "none")
                .log();
        ServeBanner.print(
                server,
                rules,
                rulesFrom,
                opened.name(),
                budget,
                stores.failurePolicy,
                bearer != null,
                grpcReflection,
                debugPort == null ? null : debugPort.address());
        stopped.await();
        return 0;
    }

    /**
     * envoy's variables ({@link EnvoyEnvironment}): one {@code event=start_refused} line per variable refused, one
     * {@code env_ignored} or {@code env_no_effect} line per variable that changes nothing; false when any is refused.
     */
    private boolean environmentAccepted() {
        EnvoyEnvironment environment =
                spec.defaultValueProvider() instanceof EnvoyEnvironment e ? e : new EnvoyEnvironment();
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        boolean accepted = true;
        for (EnvoyEnvironment.Finding f :
                environment.findings(o -> spec.findOption(o) != null, parsed::hasMatchedOption)) {
            LoggingEventBuilder line = switch (f.level()) {
                case REFUSED -> log.atError().addKeyValue("event", "start_refused");
                case IGNORED -> log.atWarn().addKeyValue("event", "env_ignored");
                case NO_EFFECT -> log.atInfo().addKeyValue("event", "env_no_effect");
            };
            line.addKeyValue("variable", f.variable())
                    .addKeyValue("reason", f.message())
                    .log();
            accepted &= f.level() != EnvoyEnvironment.Level.REFUSED;
        }
        return accepted;
    }

    /** A start that cannot go on: one {@code event=start_refused} line saying why, and the exit code. */
    static int refuse(int exitCode, @Nullable String reason) {
        log.atError()
                .addKeyValue("event", "start_refused")
                .addKeyValue("reason", reason)
                .log();
        return exitCode;
    }

    private static Object orOff(@Nullable InetSocketAddress address) {
        return address == null ? "off" : address;
    }
}
