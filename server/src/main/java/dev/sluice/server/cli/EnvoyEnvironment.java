package dev.sluice.server.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * envoyproxy/ratelimit's environment (its {@code src/settings/settings.go}) read by {@code sluice serve}: one row per
 * variable of envoy's, saying what Sluice does with it when it is set. A variable is either
 * <ul>
 *   <li><b>honoured</b>: it sets a serve option ({@link #OPTIONS}, this class being the command's
 *       {@link CommandLine.IDefaultValueProvider}, so a flag given on the command line always wins);</li>
 *   <li><b>accepted</b> with the values that mean what Sluice does anyway ({@code USE_STATSD=false},
 *       {@code CONFIG_TYPE=FILE}), and refused with any other;</li>
 *   <li><b>without effect</b>, said once at startup with why (a pool size for a client that multiplexes one
 *       connection);</li>
 *   <li><b>inert</b> as in envoy, which reads it only beside another setting ({@code MEMCACHE_HOST_PORT} without
 *       {@code BACKEND_TYPE=memcache}): said once at startup; with that setting, the row applies;</li>
 *   <li><b>refused</b>: the start stops (exit code 2) with one line per variable naming it, saying it isn't
 *       supported and what to do instead.</li>
 * </ul>
 * A variable set to an empty or blank value counts as unset.
 *
 * <p><b>Envoy's defaults where envoy's deployment is.</b> {@code RUNTIME_ROOT} set means "this replaces envoy's
 * service": the listeners take envoy's defaults ({@code 0.0.0.0}, HTTP 8080, gRPC 8081, the debug port 6070), the
 * rules are read from {@code RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY} and the store from
 * {@code REDIS_URL}. Without it, each variable set still sets its option, around Sluice's defaults (loopback, no
 * debug port): {@code PORT=9000} alone is {@code --http 127.0.0.1:9000}.
 */
final class EnvoyEnvironment implements CommandLine.IDefaultValueProvider {
    /** envoy's defaults (settings.go) for its listeners. */
    static final String ENVOY_HOST = "0.0.0.0";

    static final int ENVOY_PORT = 8080;
    static final int ENVOY_GRPC_PORT = 8081;
    static final int ENVOY_DEBUG_PORT = 6070;

    /** What happens to a variable that is set. */
    enum Use {
        /** Sets {@link Row#option()}. */
        SETS,
        /** Fine with the values in {@link Row#accepted()}; refused with any other. */
        ACCEPTS,
        /** Accepted whatever its value; one line at startup says why it changes nothing. */
        NO_EFFECT,
        /** Refused whatever its value (unless in {@link Row#accepted()}), with {@link Row#reason()}. */
        REFUSED
    }

    /**
     * One variable of envoy's.
     *
     * @param option   the serve option it sets ({@link Use#SETS}), or will once supported (a refusal {@code …not
     *                 supported yet}), else null
     * @param accepted the values (as envoy parses them: booleans as Go's {@code strconv.ParseBool}, words in any case)
     *                 that are fine as they are
     * @param reason   for a refusal, why and what to do instead; for {@link Use#NO_EFFECT}, why nothing needs setting
     * @param onlyWithVariable a variable without whose {@code onlyWithValue} envoy does not read this one (the row is
     *                 then inert), or null
     */
    record Row(
            String variable,
            Use use,
            @Nullable String option,
            Set<String> accepted,
            String reason,
            @Nullable String onlyWithVariable,
            @Nullable String onlyWithValue) {}

    /** What {@link #findings} has to say of one variable set. */
    enum Level {
        REFUSED,
        IGNORED,
        NO_EFFECT
    }

    record Finding(String variable, Level level, @Nullable String option, String message) {}

    private final Map<String, String> env;

    EnvoyEnvironment(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /** The process's environment; picocli makes this one for {@code @Command(defaultValueProvider = …)}. */
    EnvoyEnvironment() {
        this(System.getenv());
    }

    /** The value of a variable, trimmed, or null when unset or blank. */
    @Nullable
    String get(String variable) {
        String v = env.get(variable);
        return v == null || v.isBlank() ? null : v.trim();
    }

    /** {@code RUNTIME_ROOT} is set: envoy's defaults apply (see the class comment). */
    boolean envoyMode() {
        return get("RUNTIME_ROOT") != null;
    }

    @Override
    public @Nullable String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec o)) {
            return null;
        }
        Function<EnvoyEnvironment, @Nullable String> f = OPTIONS.get(o.longestName());
        if (f == null) {
            return null;
        }
        try {
            return f.apply(this);
        } catch (IllegalArgumentException e) {
            return null; // findings() refuses it, naming the variable
        }
    }

    /** The value envoy's variables give {@code option}, or null; throws what is wrong with them. */
    @Nullable
    String valueOf(String option) {
        Function<EnvoyEnvironment, @Nullable String> f = OPTIONS.get(option);
        return f == null ? null : f.apply(this);
    }

    /**
     * What to say of the variables set: refusals first, then what is ignored or changes nothing, in the table's order.
     * A flag given on the command line wins over the variables that would set its option, their refusals included.
     *
     * @param exists whether the command has an option (the stats options are on another branch)
     * @param given  whether an option was given on the command line
     */
    List<Finding> findings(Predicate<String> exists, Predicate<String> given) {
        List<Finding> refused = new ArrayList<>();
        List<Finding> notes = new ArrayList<>();
        for (String option : new TreeSet<>(OPTIONS.keySet())) {
            if (exists.test(option) && !given.test(option)) {
                try {
                    valueOf(option);
                } catch (IllegalArgumentException e) {
                    String message = String.valueOf(e.getMessage());
                    String variable = message.split("[ =']", 2)[0]; // every message starts with its variable
                    refused.add(new Finding(
                            variable.matches("[A-Z_]+") ? variable : option, Level.REFUSED, option, message));
                }
            }
        }
        for (Row r : EnvoyVariables.ROWS.values()) {
            String value = get(r.variable());
            if (value == null) {
                continue;
            }
            String guard = r.onlyWithVariable();
            if (guard != null && !Objects.equals(r.onlyWithValue(), word(get(guard)))) {
                notes.add(new Finding(
                        r.variable(),
                        Level.IGNORED,
                        null,
                        r.variable() + " is ignored, as envoy ignores it unless " + guard + "=" + r.onlyWithValue()));
                continue;
            }
            switch (r.use()) {
                case SETS -> {} // its option's value was checked above
                case NO_EFFECT -> notes.add(new Finding(r.variable(), Level.NO_EFFECT, null, r.reason()));
                case ACCEPTS, REFUSED -> {
                    if (!r.accepted().contains(word(value))) {
                        // the value only where it is a word or a boolean: others may be secrets or paths
                        String what = r.accepted().isEmpty() ? r.variable() : r.variable() + "=" + value;
                        refused.add(new Finding(
                                r.variable(), Level.REFUSED, null, what + " is not supported: " + r.reason()));
                    }
                }
            }
        }
        List<Finding> out = new ArrayList<>(refused);
        out.addAll(notes);
        return out;
    }

    /** A value as envoy compares it: booleans as Go's {@code strconv.ParseBool} reads them, words in lower case. */
    static @Nullable String word(@Nullable String value) {
        if (value == null) {
            return null;
        }
        return switch (value) {
            case "1", "t", "T", "TRUE", "true", "True" -> "true";
            case "0", "f", "F", "FALSE", "false", "False" -> "false";
            default -> value.toLowerCase(Locale.ROOT);
        };
    }

    /** A boolean variable as envoy parses it, or {@code otherwise} when unset. */
    boolean bool(String variable, boolean otherwise) {
        String v = get(variable);
        String w = word(v);
        if (v == null) {
            return otherwise;
        }
        if (!"true".equals(w) && !"false".equals(w)) {
            throw new IllegalArgumentException(variable + " '" + v + "' is not a boolean: write true or false");
        }
        return "true".equals(w);
    }

    // -----------------------------------------------------------------------------------------------------------------
    // the options envoy's variables set (flags win: picocli asks for these only when the flag is not given)

    /** Each serve option some variable sets, and how. Options not on this branch are never asked for. */
    static final Map<String, Function<EnvoyEnvironment, @Nullable String>> OPTIONS = Map.ofEntries(
            Map.entry("--http", e -> e.listener("HOST", "PORT", ENVOY_PORT)),
            Map.entry("--grpc", e -> e.listener("GRPC_HOST", "GRPC_PORT", ENVOY_GRPC_PORT)),
            Map.entry("--debug", e -> e.listener("DEBUG_HOST", "DEBUG_PORT", ENVOY_DEBUG_PORT)),
            Map.entry("--config", EnvoyEnvironment::runtimeDirectory),
            Map.entry("--store", EnvoyRedis::store),
            Map.entry("--log-level", EnvoyEnvironment::logLevel),
            Map.entry("--log-format", EnvoyEnvironment::logFormat),
            Map.entry("--semantics", e -> e.bool("STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", false) ? "strict" : null),
            Map.entry("--rls-response-headers", e -> e.bool("LIMIT_RESPONSE_HEADERS_ENABLED", false) ? "envoy" : null),
            Map.entry("--rls-dynamic-metadata", e -> e.bool("RESPONSE_DYNAMIC_METADATA", false) ? "true" : null),
            Map.entry("--shadow-mode", e -> e.bool("SHADOW_MODE", false) ? "true" : null),
            Map.entry("--quota-mode", e -> e.bool("QUOTA_MODE", false) ? "true" : null),
            // the stats options (StatsOptions)
            Map.entry("--statsd", EnvoyEnvironment::statsd),
            Map.entry("--statsd-protocol", e -> e.get("STATSD_PROTOCOL")),
            Map.entry("--stats-flush-interval", e -> e.get("STATS_FLUSH_INTERVAL")),
            Map.entry("--near-limit-ratio", e -> e.get("NEAR_LIMIT_RATIO")),
            Map.entry("--prometheus", EnvoyEnvironment::prometheus),
            Map.entry("--prometheus-path", e -> e.bool("USE_PROMETHEUS", false) ? e.get("PROMETHEUS_PATH") : null));

    /**
     * {@code HOST:PORT} of a listener: envoy's host ({@code 0.0.0.0}) and port in envoy mode, else only when one of
     * its variables is set, loopback unless the host is given.
     */
    private @Nullable String listener(String hostVariable, String portVariable, int envoyPort) {
        String host = get(hostVariable);
        String port = get(portVariable);
        if (host == null && port == null && !envoyMode()) {
            return null;
        }
        if (port != null && !port.matches("[0-9]{1,5}")) {
            throw new IllegalArgumentException(portVariable + " '" + port + "' is not a port number: write e.g. "
                    + portVariable + "=" + envoyPort);
        }
        String h = host != null ? host : envoyMode() ? ENVOY_HOST : "127.0.0.1";
        return (h.contains(":") ? "[" + h + "]" : h) + ":" + (port != null ? port : Integer.toString(envoyPort));
    }

    /**
     * envoy's rules directory: {@code RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY} (the last {@code config}
     * by default). With {@code RUNTIME_WATCH_ROOT} true (envoy's default) the path goes through {@code RUNTIME_ROOT} as
     * written, so a swap of that symlink to a new directory is a reload; with false, {@code RUNTIME_ROOT} is resolved
     * once, at startup, and the service watches that directory's files, as envoy does.
     */
    private @Nullable String runtimeDirectory() {
        String root = get("RUNTIME_ROOT");
        if (root == null) {
            for (String v : List.of("RUNTIME_SUBDIRECTORY", "RUNTIME_APPDIRECTORY")) {
                if (get(v) != null) {
                    throw new IllegalArgumentException(v + " is set without RUNTIME_ROOT: set RUNTIME_ROOT too "
                            + "(envoy's default is /srv/runtime_data/current), or pass --config");
                }
            }
            return null;
        }
        Path r = Path.of(root);
        if (!bool("RUNTIME_WATCH_ROOT", true)) {
            try {
                r = r.toRealPath();
            } catch (IOException e) {
                // a missing root is the rules loader's to report, with the path it tried
            }
        }
        String sub = get("RUNTIME_SUBDIRECTORY");
        Path dir = sub == null ? r : r.resolve(sub);
        String app = get("RUNTIME_APPDIRECTORY");
        return dir.resolve(app == null ? "config" : app).toString();
    }

    /** envoy's {@code LOG_LEVEL} (logrus's names, any case) as Sluice's root level. */
    private @Nullable String logLevel() {
        String v = get("LOG_LEVEL");
        if (v == null) {
            return null;
        }
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "trace", "debug", "info", "error" -> v.toLowerCase(Locale.ROOT);
            case "warn", "warning" -> "warn";
            case "fatal", "panic" -> "error";
            default ->
                throw new IllegalArgumentException(
                        "LOG_LEVEL '" + v + "' is unknown: write trace, debug, info, warn or error");
        };
    }

    /** envoy's {@code LOG_FORMAT}: {@code text} (its default) is logfmt here, {@code json} is JSON lines. */
    private @Nullable String logFormat() {
        String v = get("LOG_FORMAT");
        if (v == null) {
            return null;
        }
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "text", "logfmt" -> "logfmt";
            case "json" -> "json";
            default -> throw new IllegalArgumentException("LOG_FORMAT '" + v + "' is unknown: write text or json");
        };
    }

    /** {@code STATSD_HOST:STATSD_PORT} when {@code USE_STATSD} is true (envoy's default where envoy's is). */
    private @Nullable String statsd() {
        if (!bool("USE_STATSD", envoyMode())) {
            return null;
        }
        String host = get("STATSD_HOST");
        String port = get("STATSD_PORT");
        return (host == null ? "localhost" : host) + ":" + (port == null ? "8125" : port);
    }

    /** {@code PROMETHEUS_ADDR} when {@code USE_PROMETHEUS} is true; Go's {@code :9090} is every interface. */
    private @Nullable String prometheus() {
        if (!bool("USE_PROMETHEUS", false)) {
            return null;
        }
        String addr = get("PROMETHEUS_ADDR");
        String a = addr == null ? ":9090" : addr;
        return a.startsWith(":") ? ENVOY_HOST + a : a;
    }
}
