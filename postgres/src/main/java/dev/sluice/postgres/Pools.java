package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.util.DriverDataSource;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Where a limiter's connections come from. Every decision borrows a connection, so it must come from a pool: a
 * {@code DataSource} that opens a new connection per borrow (PGSimpleDataSource, a DriverManager URL, an
 * embedded database's plain data source) would make each decision pay a whole PostgreSQL login, tens of
 * milliseconds, more than a decision's budget on a busy machine.
 *
 * <p>So a limiter built on a JDBC URL gets a HikariCP pool of its own, and so does one built on a DataSource that
 * does not pool: it is wrapped, not refused (the user's DataSource still makes every connection; the pool keeps
 * them). Whether a DataSource pools is known from its class for the common pools and otherwise asked of the
 * database: two borrows in a row on one thread get the same server process ({@code pg_backend_pid()}) from a
 * pool and two from a DataSource that opens a connection each time. The limiter closes a pool it made, never the
 * caller's DataSource.
 *
 * <p>A pool of its own is of fixed size (HikariCP's advice: its minimum idle is its maximum), filled before the
 * limiter serves ({@link #fill}), so that the first burst of decisions finds its connections instead of waiting
 * for one login after another; its logins go through a {@link LoginGate}, so that a refused password is not
 * tried again and again; and a server that accepts a connection but never answers the login (another service at
 * that port) fails the login after {@link #LOGIN_TIMEOUT_SECONDS} s instead of never.
 */
final class Pools {
    /** Class names of DataSources known to pool: HikariCP, DBCP, Tomcat, c3p0, Vibur, Agroal, Druid, UCP. */
    private static final Pattern POOLS = Pattern.compile("(?i).*(hikari|pool|c3p0|vibur|agroal|druid).*");

    /** What the limiter borrows from, the pool it made (null when the caller's DataSource pools) and where it is. */
    /** @param owned the pool made here (closed with the limiter), or null for the caller's pooling DataSource */
    record Resolved(DataSource dataSource, @Nullable HikariDataSource owned, String where) {}

    private Pools() {}

    /** How long the driver waits for a login (connect, TLS, authentication) before it gives up. */
    static final int LOGIN_TIMEOUT_SECONDS = 10;

    /** A pool of its own on {@code jdbcUrl}, of {@code size} connections, whose wait for one is {@code budget}. */
    static Resolved own(String jdbcUrl, int size, Duration budget) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("'" + redact(String.valueOf(jdbcUrl)) + "' is not a PostgreSQL JDBC URL:"
                    + " write jdbc:postgresql://host:5432/database?user=…&password=…");
        }
        Properties driver = new Properties();
        driver.setProperty("cancelSignalTimeout", "1"); // a stopped server must not hold a worker 10 s
        // the driver's default is to wait for ever for a server that accepted the connection and says nothing
        driver.setProperty("loginTimeout", Integer.toString(LOGIN_TIMEOUT_SECONDS));
        // ends the driver's login thread when the login timed out; every statement sets its own network timeout
        driver.setProperty("socketTimeout", Integer.toString(3 * LOGIN_TIMEOUT_SECONDS));
        HikariConfig c = config(size, budget);
        c.setDataSource(new LoginGate(new DriverDataSource(jdbcUrl, null, driver, null, null), System::nanoTime));
        HikariDataSource pool = new HikariDataSource(c);
        return new Resolved(pool, pool, redact(jdbcUrl));
    }

    /**
     * Waits until the pool holds all its connections, at most {@code wait}: HikariCP opens them one after another
     * in the background, and a burst of first decisions would otherwise wait for those logins. A database that
     * admits fewer (max_connections) does not stop the limiter: it serves with what it has.
     *
     * <p>A real wait on purpose, not the limiter's {@link dev.sluice.Scheduler}: it waits for logins to a database,
     * which happen on HikariCP's own thread on the database's time, and {@code build()} blocks on it anyway; a 5 ms
     * poll of the pool's count, bounded by {@code wait}, is what HikariCP offers to watch them.
     */
    static void fill(HikariDataSource pool, Duration wait) {
        long end = System.nanoTime() + wait.toNanos();
        HikariPoolMXBean bean = pool.getHikariPoolMXBean();
        while (bean != null && bean.getTotalConnections() < pool.getMaximumPoolSize() && end - System.nanoTime() > 0) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The caller's DataSource as is when it pools, else wrapped in a pool of {@code size} connections. */
    static Resolved resolve(DataSource given, int size, Duration budget) {
        String where = describe(given);
        if (POOLS.matcher(given.getClass().getName()).matches() || reusesConnections(given)) {
            return new Resolved(given, null, where);
        }
        HikariConfig c = config(size, budget);
        c.setDataSource(new LoginGate(given, System::nanoTime));
        HikariDataSource pool = new HikariDataSource(c);
        return new Resolved(pool, pool, where);
    }

    private static HikariConfig config(int size, Duration budget) {
        HikariConfig c = new HikariConfig();
        c.setPoolName("sluice-postgres");
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size); // fixed size: the connections are there when a burst comes
        // a connection the database cannot give within a budget means it is down or overloaded: the decision
        // fails then (HikariCP's least is 250 ms) instead of holding a worker for HikariCP's default 30 s
        c.setConnectionTimeout(Math.max(250, budget.toMillis()));
        c.setValidationTimeout(250);
        return c;
    }

    /** True when two borrows in a row get the same server process: the DataSource pools. */
    private static boolean reusesConnections(DataSource ds) {
        try {
            int first = backendPid(ds);
            int second = backendPid(ds); // the first connection was given back: a pool hands it out again
            return first == second;
        } catch (SQLException e) {
            return false; // cannot tell (the database may be down): a pool of ours is never wrong
        }
    }

    private static int backendPid(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("select pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** The DataSource's URL without its password (from {@code getJdbcUrl()} or {@code getUrl()}), or its class. */
    static String describe(DataSource ds) {
        for (String getter : new String[] {"getJdbcUrl", "getUrl"}) {
            try {
                Method m = ds.getClass().getMethod(getter);
                Object url = m.invoke(ds);
                if (url != null) {
                    return redact(url.toString());
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                // not this getter
            }
        }
        return ds.getClass().getSimpleName();
    }

    /** The URL with any password parameter or user-info password replaced. */
    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1***").replaceAll("(://[^:/@]*:)[^@/]*@", "$1***@");
    }
}
