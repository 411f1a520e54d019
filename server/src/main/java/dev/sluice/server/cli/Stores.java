package dev.sluice.server.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.postgres.PostgresRateLimiter;
import dev.sluice.redis.RedisRateLimiter;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Opens the store named by {@code --store}:
 * <ul>
 *   <li>{@code memory} — the in-process store (the default);</li>
 *   <li>{@code redis://[user:password@]host:port[/db]}, {@code rediss://…}, several comma-separated addresses
 *       for a Redis Cluster (a single address is asked whether it is one);</li>
 *   <li>{@code postgresql://[user[:password]@]host[:port]/database[?param=value…]} or a {@code jdbc:postgresql:}
 *       URL — a HikariCP pool of {@code poolSize} connections; the schema comes from {@code sluice migrate}.</li>
 * </ul>
 * Remote stores are marked blocking: the service calls them on its bounded pool, under {@code --store-timeout}.
 */
final class Stores {
    private Stores() {
    }

    /** An opened store, its display name, whether its calls block on I/O, and what to close after it. */
    record Opened(RateLimiter limiter, String name, boolean blocking, AutoCloseable resources) implements AutoCloseable {
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

    static Opened open(String spec, int maxKeys, Duration storeTimeout, int poolSize) {
        String s = spec == null ? "memory" : spec.trim();
        if (s.equals("memory")) {
            return new Opened(InMemoryRateLimiter.builder().maxKeys(maxKeys).build(), "memory", false, null);
        }
        String kind = kind(s);
        if ("redis".equals(kind)) {
            return new Opened(RedisRateLimiter.builder(s).timeBudget(storeTimeout).build(), "redis", true, null);
        }
        if ("postgres".equals(kind)) {
            HikariDataSource ds = dataSource(s, poolSize);
            try {
                return new Opened(PostgresRateLimiter.create(ds), "postgres", true, ds);
            } catch (RuntimeException e) {
                ds.close();
                throw e;
            }
        }
        throw new IllegalArgumentException("unknown store '" + spec + "': use memory, redis://host:6379 or "
                + "postgresql://user@host:5432/db");
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

    /** A pool for {@code postgresql://user:password@host:port/db?…} (libpq's URI form) or a JDBC URL. */
    static HikariDataSource dataSource(String spec, int poolSize) {
        HikariConfig c = new HikariConfig();
        c.setPoolName("sluice-postgres");
        c.setMaximumPoolSize(poolSize);
        c.setMinimumIdle(Math.min(2, poolSize));
        c.setConnectionTimeout(5_000);
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
        return new HikariDataSource(c);
    }

    /** The URI with any password replaced, for messages and logs. */
    static String redact(String spec) {
        return spec.replaceAll("(://[^:/@]*:)[^@]*@", "$1***@");
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
