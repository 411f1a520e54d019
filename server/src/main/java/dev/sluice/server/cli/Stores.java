package dev.sluice.server.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.postgres.PostgresRateLimiter;
import dev.sluice.postgres.RetryPolicy;
import dev.sluice.redis.RedisRateLimiter;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the store named by {@code --store}:
 * <ul>
 *   <li>{@code memory} — the in-process store (the default);</li>
 *   <li>{@code redis://[user:password@]host:port[/db]}, {@code rediss://…}, several comma-separated addresses
 *       for a Redis Cluster (a single address is asked whether it is one);
 *       {@code redis-sentinel://[password@]host1:26379,host2:26379[/db]#mastername} for the master that Redis
 *       Sentinel names (followed across failovers);</li>
 *   <li>{@code postgresql://[user[:password]@]host[:port]/database[?param=value…]} or a {@code jdbc:postgresql:}
 *       URL — a HikariCP pool of {@code poolSize} connections; a missing schema is created (one log line says
 *       so), as {@code sluice migrate} does.</li>
 * </ul>
 * Remote stores (their calls leave the process; the service asks them asynchronously) get a time budget per call
 * ({@code --store-timeout}, by default {@link #REDIS_BUDGET} or {@link #POSTGRES_BUDGET}) and are wrapped in a
 * {@link FailSafeRateLimiter} with the {@code --failure-policy}: when the store is slow, down or failing, the
 * policy decides and the decision says so. The memory store is never wrapped: it cannot be down.
 *
 * <p><b>A store that is down at startup does not stop the service; a misconfigured one does.</b> The store is
 * opened by {@link FailSafeRateLimiter}, which waits for the first attempt (up to {@link #STARTUP_WAIT}), so that a
 * healthy store decides from the first request, warm (PostgreSQL's pool filled, each decision path run once). When
 * the store is unavailable (down, restarting, not answering), the service starts anyway and serves by its policy
 * while the store is opened again in the background every probe interval. When it is misconfigured (a refused
 * password or privilege, an unknown host, another protocol at that port, a TLS mismatch, a missing database),
 * opening throws the store's message and {@code serve} refuses to start, unless told to start despite it
 * ({@code --start-despite-misconfigured-store}: then it serves by its policy, degraded {@code misconfigured}, and
 * tries the store again with a backoff of 1 s to 30 s). A malformed URI always refuses to start.
 */
final class Stores {
    private static final Logger log = LoggerFactory.getLogger(Stores.class);

    /** The default time budget of a Redis decision: the store's own default, sized from its load benchmark. */
    static final Duration REDIS_BUDGET = RedisRateLimiter.DEFAULT_TIME_BUDGET;
    /** The default time budget of a PostgreSQL decision: the store's own default, sized from its benchmark. */
    static final Duration POSTGRES_BUDGET = RetryPolicy.DEFAULT.budget();
    /**
     * How long {@code serve} waits for the store's first attempt before it starts by its policy: a healthy store
     * opens well within it, its pool filled and warm; a store that neither answers nor refuses (a silent port)
     * fails its login within the stores' own timeouts (Redis 2 s, PostgreSQL 10 s, then a probe of what answers).
     */
    static final Duration STARTUP_WAIT = Duration.ofSeconds(30);

    /**
     * How often the service deletes expired PostgreSQL rows: a sweep deletes at most 10 batches of 1,000, so
     * up to 2,000 keys a second can expire without the table growing (the soak's 1M-key load needs ~1,200).
     */
    static final Duration CLEANER_INTERVAL = Duration.ofSeconds(5);

    private Stores() {}

    /**
     * The time budget of a remote store's calls: {@link #STORE_DEFAULT} ({@link #REDIS_BUDGET} or
     * {@link #POSTGRES_BUDGET}), or one given ({@code --store-timeout}).
     */
    record Budget(Optional<Duration> given) {
        /** Each store's own default. */
        static final Budget STORE_DEFAULT = new Budget(Optional.empty());

        /** {@code d} for every store. */
        static Budget of(Duration d) {
            return new Budget(Optional.of(Objects.requireNonNull(d, "budget")));
        }

        Duration or(Duration storeDefault) {
            return given.orElse(storeDefault);
        }
    }

    /**
     * An opened store, its display name, whether it is remote (its calls leave the process), the time budget it was built with (none for
     * the memory store), and what to close after it (if anything).
     */
    record Opened(
            RateLimiter limiter,
            String name,
            boolean remote,
            Optional<Duration> budget,
            @Nullable AutoCloseable resources)
            implements AutoCloseable {
        /** Closes the store and its resources (when no server took it over). */
        @Override
        public void close() {
            limiter.close();
            closeResources();
        }

        /** Closes what the store was built on (the server closes the store itself). */
        void closeResources() {
            if (resources != null) {
                try {
                    resources.close();
                } catch (Exception e) {
                    // closing on the way out: nothing useful to do
                }
            }
        }
    }

    /**
     * Opens {@code spec}.
     *
     * @param budget the time budget per store call
     * @param policy what remote stores decide when they cannot
     */
    static Opened open(String spec, int maxKeys, Budget budget, int poolSize, FailurePolicy policy) {
        return open(spec, maxKeys, budget, poolSize, policy, false);
    }

    /**
     * Opens {@code spec}; a misconfigured store throws its exception (a {@link dev.sluice.StoreException} whose
     * degradation is {@code MISCONFIGURED}) unless {@code startDespiteMisconfiguration}.
     */
    static Opened open(
            @Nullable String spec,
            int maxKeys,
            Budget budget,
            int poolSize,
            FailurePolicy policy,
            boolean startDespiteMisconfiguration) {
        String s = spec == null ? "memory" : spec.trim();
        if (s.equals("memory")) {
            return new Opened(
                    InMemoryRateLimiter.builder().maxKeys(maxKeys).build(), "memory", false, Optional.empty(), null);
        }
        String kind = kind(s);
        if ("redis".equals(kind)) {
            Duration b = budget.or(REDIS_BUDGET);
            checkRedisUri(s);
            lettuceOnEpoll();
            return failSafe(
                    "redis",
                    b,
                    policy,
                    startDespiteMisconfiguration,
                    () -> RedisRateLimiter.builder(s).timeBudget(b).build());
        }
        if ("postgres".equals(kind)) {
            Duration b = budget.or(POSTGRES_BUDGET);
            String url = jdbcUrl(s); // a malformed URI is refused now, not retried forever
            return failSafe("postgres", b, policy, startDespiteMisconfiguration, () -> {
                // a pool of the limiter's own: fixed size, filled before it serves, logins backed off when refused
                PostgresRateLimiter store = PostgresRateLimiter.builder(url)
                        .retryPolicy(RetryPolicy.DEFAULT.withBudget(b))
                        .threads(poolSize)
                        .build();
                if (store.schemaCreated()) {
                    log.atInfo()
                            .addKeyValue("event", "schema_created")
                            .addKeyValue("store", "postgres")
                            .addKeyValue("uri", redact(s))
                            .addKeyValue("schema", store.schema())
                            .addKeyValue("prefix", store.tablePrefix())
                            .addKeyValue(
                                    "action",
                                    "Sluice's tables and functions were missing: created them, as "
                                            + "sluice migrate does")
                            .log();
                }
                store.cleaner(CLEANER_INTERVAL); // expired rows go; without it the table only grows
                return store;
            });
        }
        throw new IllegalArgumentException("unknown store '" + spec
                + "': use memory, redis://host:6379, redis-sentinel://host:26379#mastername or "
                + "postgresql://user@host:5432/db");
    }

    /**
     * {@code opened} with exact local leases of at most {@code maxLease} permits a key ({@code --leases}), or as it
     * is for 0. Leases sit over the failure policy: a degraded decision takes nothing and is not remembered.
     *
     * @throws IllegalArgumentException for a negative maximum or the memory store (already local)
     */
    static Opened leased(Opened opened, long maxLease) {
        if (maxLease == 0) {
            return opened;
        }
        if (maxLease < 0) {
            throw new IllegalArgumentException("--leases " + maxLease + " is negative: give the most permits of a "
                    + "key one instance may hold, e.g. --leases=1024, or leave it out");
        }
        if (!opened.remote()) {
            throw new IllegalArgumentException("--leases needs a remote store (redis://… or postgresql://…): the "
                    + opened.name() + " store already decides in this process");
        }
        RateLimiter leases =
                LeasedRateLimiter.builder(opened.limiter()).maxLease(maxLease).build();
        return new Opened(leases, opened.name() + "+leases", true, opened.budget(), opened.resources());
    }

    /**
     * The store behind {@code policy}, opened by {@link FailSafeRateLimiter}: now if it can be, else (it is down) in
     * the background while the policy answers; a misconfiguration throws unless {@code startDespiteMisconfiguration}.
     */
    private static Opened failSafe(
            String name,
            Duration budget,
            FailurePolicy policy,
            boolean startDespiteMisconfiguration,
            Supplier<RateLimiter> build) {
        FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(build)
                .policy(policy)
                .startupWait(STARTUP_WAIT)
                .startDespiteMisconfiguration(startDespiteMisconfiguration)
                .build();
        return new Opened(limiter, name, true, Optional.of(budget), null);
    }

    /** Refuses Redis URIs that can never work, before the service starts retrying them. */
    private static void checkRedisUri(String spec) {
        if (spec.startsWith("redis-sentinel://") || spec.startsWith("rediss-sentinel://")) {
            checkSentinelUri(spec);
            return;
        }
        // limit 0: a trailing comma is forgiven (trailing empty strings are dropped), as RedisUris skips it too
        for (String one : spec.split(",", 0)) {
            String u = one.trim();
            if (!u.startsWith("redis://") && !u.startsWith("rediss://")) {
                u = "redis://" + u; // cluster seed lists may leave the scheme out after the first
            }
            URI parsed;
            try {
                parsed = URI.create(u);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("store '" + redact(spec) + "' is not a Redis URI: write "
                        + "redis://[user:password@]host:6379[/db]");
            }
            if (parsed.getHost() == null) {
                throw new IllegalArgumentException("store '" + redact(spec) + "' names no host: write "
                        + "redis://[user:password@]host:6379[/db]");
            }
        }
    }

    /** Refuses a Sentinel URI without sentinels or the name of the master they monitor. */
    private static void checkSentinelUri(String spec) {
        String form = "redis-sentinel://[password@]host1:26379,host2:26379[/db]#mastername";
        int hash = spec.lastIndexOf('#');
        if (hash < 0 || spec.substring(hash + 1).isBlank()) {
            throw new IllegalArgumentException("store '" + redact(spec) + "' names no master: end it with #<name>,"
                    + " the name the sentinels monitor, e.g. " + form);
        }
        String rest = spec.substring(spec.indexOf("://") + 3, hash);
        String hosts = rest.substring(rest.lastIndexOf('@') + 1).split("[/?]", -1)[0];
        if (hosts.isBlank()) {
            throw new IllegalArgumentException("store '" + redact(spec) + "' names no sentinel: write " + form);
        }
    }

    /**
     * The jar carries Netty's io_uring for the HTTP endpoint ({@code HttpTransport}); Lettuce, finding it beside epoll,
     * keeps epoll and logs a warning that it did, for every client. It keeps epoll without the warning unless
     * {@code -Dio.lettuce.core.iouring} says otherwise.
     */
    private static void lettuceOnEpoll() {
        if (System.getProperty("io.lettuce.core.iouring") == null) {
            System.setProperty("io.lettuce.core.iouring", "false");
        }
    }

    /** {@code redis} or {@code postgres} for a URI of theirs, else null. */
    static @Nullable String kind(String s) {
        if (s.startsWith("redis://")
                || s.startsWith("rediss://")
                || s.startsWith("redis-sentinel://")
                || s.startsWith("rediss-sentinel://")) {
            return "redis";
        }
        if (s.startsWith("postgresql://") || s.startsWith("postgres://") || s.startsWith("jdbc:postgresql:")) {
            return "postgres";
        }
        return null;
    }

    /**
     * The JDBC URL of {@code postgresql://user:password@host:port/db?…} (libpq's URI form; user and password become
     * the driver's {@code user} and {@code password} parameters), or a {@code jdbc:postgresql:} URL as it is.
     */
    static String jdbcUrl(String spec) {
        if (spec.startsWith("jdbc:")) {
            return spec;
        }
        URI u;
        try {
            u = URI.create(spec);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("store '" + redact(spec) + "' is not a URI: write "
                    + "postgresql://user:password@host:5432/database");
        }
        if (u.getHost() == null) {
            throw new IllegalArgumentException("store '" + redact(spec) + "' names no host: write "
                    + "postgresql://user:password@host:5432/database");
        }
        String db = u.getRawPath() == null || u.getRawPath().length() <= 1 ? "/" : u.getRawPath();
        StringBuilder url = new StringBuilder("jdbc:postgresql://")
                .append(u.getHost())
                .append(u.getPort() > 0 ? ":" + u.getPort() : "")
                .append(db);
        String query = u.getRawQuery() == null ? "" : u.getRawQuery();
        String info = u.getRawUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            query = param(query, "user", decode(colon < 0 ? info : info.substring(0, colon)));
            if (colon >= 0) {
                query = param(query, "password", decode(info.substring(colon + 1)));
            }
        }
        return url.append(query.isEmpty() ? "" : "?" + query).toString();
    }

    /**
     * A pool for {@code sluice migrate} on {@code spec}'s JDBC URL: {@code poolSize} connections, a connection wait
     * of {@code timeout}, and the driver's login timeout (a server that never answers must not hang the command).
     */
    static HikariDataSource dataSource(String spec, int poolSize, Duration timeout) {
        HikariConfig c = new HikariConfig();
        c.setPoolName("sluice-migrate");
        c.setJdbcUrl(jdbcUrl(spec));
        c.setMaximumPoolSize(poolSize);
        c.setConnectionTimeout(Math.max(250, timeout.toMillis()));
        c.addDataSourceProperty("loginTimeout", Long.toString(Math.max(1, timeout.toSeconds())));
        return new HikariDataSource(c);
    }

    private static String param(String query, String name, String value) {
        return (query.isEmpty() ? "" : query + "&") + name + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** The URI with any password replaced, for messages and logs. */
    static String redact(String spec) {
        if ("redis".equals(kind(spec))) { // redis://secret@host: a user info without ':' is a password to Redis
            return spec.replaceAll("://[^@]*@", "://***@");
        }
        return spec.replaceAll("(://[^:/@]*:)[^@]*@", "$1***@");
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    /** {@code --failure-policy}: fail_open, fail_closed or fallback_local (any case, - or _). */
    static FailurePolicy policy(String name) {
        String n = name == null ? "" : name.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (FailurePolicy p : FailurePolicy.values()) {
            if (p.name().equals(n)) {
                return p;
            }
        }
        throw new IllegalArgumentException(
                "--failure-policy '" + name + "' is unknown: use fail_open, fail_closed " + "or fallback_local");
    }
}
