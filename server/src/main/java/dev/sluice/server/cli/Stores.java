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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the store named by {@code --store}:
 * <ul>
 *   <li>{@code memory} — the in-process store (the default);</li>
 *   <li>{@code redis://[user:password@]host:port[/db]}, {@code rediss://…}, several comma-separated addresses
 *       for a Redis Cluster (a single address is asked whether it is one);</li>
 *   <li>{@code postgresql://[user[:password]@]host[:port]/database[?param=value…]} or a {@code jdbc:postgresql:}
 *       URL — a HikariCP pool of {@code poolSize} connections; a missing schema is created (one log line says
 *       so), as {@code sluice migrate} does.</li>
 * </ul>
 * Remote stores are marked blocking (the service calls them on its bounded pool), get a time budget per call
 * ({@code --store-timeout}, by default {@link #REDIS_BUDGET} or {@link #POSTGRES_BUDGET}) and are wrapped in a
 * {@link FailSafeRateLimiter} with the {@code --failure-policy}: when the store is slow, down or failing, the
 * policy decides and the decision says so. The memory store is never wrapped: it cannot be down.
 *
 * <p><b>A store that is down at startup does not stop the service.</b> The store is built once, in the
 * foreground, so that a healthy store decides from the first request; when that fails, the service starts anyway
 * and serves by its policy while {@link FailSafeRateLimiter} keeps building the store in the background (every
 * probe interval) and switches to it once it answers. A mistake that no retry can fix (a malformed URI) still
 * refuses to start.
 */
final class Stores {
    private static final Logger log = LoggerFactory.getLogger(Stores.class);

    /** The default time budget of a Redis decision: the store's own default, sized from its load benchmark. */
    static final Duration REDIS_BUDGET = RedisRateLimiter.DEFAULT_TIME_BUDGET;
    /** The default time budget of a PostgreSQL decision: the store's own default, sized from its benchmark. */
    static final Duration POSTGRES_BUDGET = RetryPolicy.DEFAULT.budget();
    /** HikariCP refuses a connection timeout below this. */
    private static final Duration HIKARI_MIN_CONNECTION_TIMEOUT = Duration.ofMillis(250);

    /**
     * How often the service deletes expired PostgreSQL rows: a sweep deletes at most 10 batches of 1,000, so
     * up to 2,000 keys a second can expire without the table growing (the soak's 1M-key load needs ~1,200).
     */
    static final Duration CLEANER_INTERVAL = Duration.ofSeconds(5);

    private Stores() {
    }

    /**
     * An opened store, its display name, whether its calls block on I/O, the time budget it was built with (null
     * for the memory store), and what to close after it.
     */
    record Opened(RateLimiter limiter, String name, boolean blocking, Duration budget, AutoCloseable resources)
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
     * @param budget the time budget per store call, or null for the store's default
     * @param policy what remote stores decide when they cannot
     */
    static Opened open(String spec, int maxKeys, Duration budget, int poolSize, FailurePolicy policy) {
        String s = spec == null ? "memory" : spec.trim();
        if (s.equals("memory")) {
            return new Opened(InMemoryRateLimiter.builder().maxKeys(maxKeys).build(), "memory", false, null, null);
        }
        String kind = kind(s);
        if ("redis".equals(kind)) {
            Duration b = budget != null ? budget : REDIS_BUDGET;
            checkRedisUri(s);
            return failSafe(s, "redis", b, policy, () -> RedisRateLimiter.builder(s).timeBudget(b).build(), null);
        }
        if ("postgres".equals(kind)) {
            Duration b = budget != null ? budget : POSTGRES_BUDGET;
            dataSourceConfig(s, poolSize, b); // a malformed URI is refused now, not retried forever
            AtomicReference<HikariDataSource> pool = new AtomicReference<>();
            return failSafe(s, "postgres", b, policy, () -> {
                HikariDataSource ds = dataSource(s, poolSize, b);
                try {
                    PostgresRateLimiter store = PostgresRateLimiter.builder(ds)
                            .retryPolicy(RetryPolicy.DEFAULT.withBudget(b)).threads(poolSize).build();
                    if (store.schemaCreated()) {
                        log.atInfo().addKeyValue("event", "schema_created").addKeyValue("store", "postgres")
                                .addKeyValue("uri", redact(s)).addKeyValue("schema", store.schema())
                                .addKeyValue("prefix", store.tablePrefix())
                                .addKeyValue("action", "Sluice's tables and functions were missing: created them, as "
                                        + "sluice migrate does")
                                .log();
                    }
                    store.cleaner(CLEANER_INTERVAL); // expired rows go; without it the table only grows
                    HikariDataSource old = pool.getAndSet(ds);
                    if (old != null) {
                        old.close();
                    }
                    return store;
                } catch (RuntimeException e) {
                    ds.close();
                    throw e;
                }
            }, () -> {
                HikariDataSource ds = pool.getAndSet(null);
                if (ds != null) {
                    ds.close();
                }
            });
        }
        throw new IllegalArgumentException("unknown store '" + spec + "': use memory, redis://host:6379 or "
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
        if (!opened.blocking()) {
            throw new IllegalArgumentException("--leases needs a remote store (redis://… or postgresql://…): the "
                    + opened.name() + " store already decides in this process");
        }
        RateLimiter leases = LeasedRateLimiter.builder(opened.limiter()).maxLease(maxLease).build();
        return new Opened(leases, opened.name() + "+leases", true, opened.budget(), opened.resources());
    }

    /**
     * The store behind {@code policy}: built now if it can be, else (it is down) built in the background by the
     * wrapper while the policy answers.
     */
    private static Opened failSafe(String spec, String name, Duration budget, FailurePolicy policy,
                                   Supplier<RateLimiter> build, AutoCloseable resources) {
        RateLimiter store;
        try {
            store = build.get();
        } catch (IllegalArgumentException e) {
            throw e; // a configuration mistake: no retry fixes it
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("event", "store_unavailable_at_start").addKeyValue("store", name)
                    .addKeyValue("uri", redact(spec)).addKeyValue("policy", policy)
                    .addKeyValue("cause", redact(String.valueOf(e.getMessage())))
                    .addKeyValue("action", "serving by the failure policy; the store is retried in the background")
                    .log();
            store = null;
        }
        // the foreground attempt just failed: the wrapper need not wait for a second one before serving
        FailSafeRateLimiter.Builder b = store != null ? FailSafeRateLimiter.builder(store)
                : FailSafeRateLimiter.builder(build).startupWait(Duration.ZERO);
        return new Opened(b.policy(policy).build(), name, true, budget, resources);
    }

    /** Refuses Redis URIs that can never work, before the service starts retrying them. */
    private static void checkRedisUri(String spec) {
        for (String one : spec.split(",")) {
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

    /** {@code redis} or {@code postgres} for a URI of theirs, else null. */
    static String kind(String s) {
        if (s.startsWith("redis://") || s.startsWith("rediss://")) {
            return "redis";
        }
        if (s.startsWith("postgresql://") || s.startsWith("postgres://") || s.startsWith("jdbc:postgresql:")) {
            return "postgres";
        }
        return null;
    }

    /**
     * A pool for {@code postgresql://user:password@host:port/db?…} (libpq's URI form) or a JDBC URL. Its connection
     * timeout is the budget, or HikariCP's least (250 ms) when the budget is shorter: the store bounds the wait
     * for a connection to its budget itself.
     */
    static HikariDataSource dataSource(String spec, int poolSize, Duration budget) {
        return new HikariDataSource(dataSourceConfig(spec, poolSize, budget));
    }

    private static HikariConfig dataSourceConfig(String spec, int poolSize, Duration budget) {
        HikariConfig c = new HikariConfig();
        c.setPoolName("sluice-postgres");
        c.setMaximumPoolSize(poolSize);
        c.setMinimumIdle(Math.min(2, poolSize));
        c.setConnectionTimeout(Math.max(HIKARI_MIN_CONNECTION_TIMEOUT.toMillis(), budget.toMillis()));
        c.setValidationTimeout(HIKARI_MIN_CONNECTION_TIMEOUT.toMillis()); // HikariCP's least, as for the wait
        c.addDataSourceProperty("cancelSignalTimeout", "1"); // a stopped server must not hold a worker 10 s
        if (spec.startsWith("jdbc:")) {
            c.setJdbcUrl(spec);
        } else {
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
            String db = u.getRawPath() == null || u.getRawPath().length() <= 1 ? "" : u.getRawPath();
            c.setJdbcUrl("jdbc:postgresql://" + u.getHost() + (u.getPort() > 0 ? ":" + u.getPort() : "") + db
                    + (u.getRawQuery() != null ? "?" + u.getRawQuery() : ""));
            String info = u.getRawUserInfo();
            if (info != null) {
                int colon = info.indexOf(':');
                c.setUsername(decode(colon < 0 ? info : info.substring(0, colon)));
                if (colon >= 0) {
                    c.setPassword(decode(info.substring(colon + 1)));
                }
            }
        }
        return c;
    }

    /** The URI with any password replaced, for messages and logs. */
    static String redact(String spec) {
        return spec.replaceAll("(://[^:/@]*:)[^@]*@", "$1***@");
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
