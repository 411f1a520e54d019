package dev.sluice.postgres;

import dev.sluice.store.ReconnectBackoff;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The logins of a pool the limiter made, held back after the database refused one: a DataSource between HikariCP
 * and the driver that, once a login was refused for the configuration (a wrong or rotated password, a role or
 * database gone: {@link PostgresFailures#refusal}), fails every further login at once, without contacting the
 * database, until the {@link ReconnectBackoff} has passed (1 s, doubling to 30 s). HikariCP refills its pool on its
 * own schedule, and every decision that finds no idle connection asks it for one: without this gate a rotated
 * password meant a login attempt every few milliseconds; with it, at most one per backoff step. A login that
 * succeeds, or fails for an outage (refused, reset), opens the gate again: outages are not backed off here.
 *
 * <p>The connection held back fails with the refused login's own SQLSTATE and message, so that the limiter's
 * decisions say {@code MISCONFIGURED} with the fix.
 */
final class LoginGate implements DataSource {
    private final DataSource driver;
    private final LongSupplier nanoTime;
    private int refusals;
    private long nextLoginAt;
    private @Nullable SQLException lastRefusal;

    LoginGate(DataSource driver, LongSupplier nanoTime) {
        this.driver = driver;
        this.nanoTime = nanoTime;
    }

    @Override
    public Connection getConnection() throws SQLException {
        admit();
        try {
            Connection c = driver.getConnection();
            opened();
            return c;
        } catch (SQLException e) {
            failed(e);
            throw e;
        }
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        admit();
        try {
            Connection c = driver.getConnection(user, password);
            opened();
            return c;
        } catch (SQLException e) {
            failed(e);
            throw e;
        }
    }

    /** Throws the last refusal again while its backoff runs. */
    private synchronized void admit() throws SQLException {
        long now = nanoTime.getAsLong();
        if (lastRefusal != null && now - nextLoginAt < 0) {
            throw new SQLException(
                    lastRefusal.getMessage() + " (no login is tried again for "
                            + TimeUnit.NANOSECONDS.toMillis(nextLoginAt - now) + " ms, backing off up to "
                            + ReconnectBackoff.MAX.toSeconds() + " s after " + refusals + " refused login(s))",
                    lastRefusal.getSQLState(),
                    lastRefusal);
        }
    }

    private synchronized void opened() {
        refusals = 0;
        lastRefusal = null;
    }

    private synchronized void failed(SQLException e) {
        if (PostgresFailures.refusal(e) == null) {
            opened(); // an outage: retried at the pool's pace
            return;
        }
        refusals++;
        lastRefusal = e;
        nextLoginAt = nanoTime.getAsLong() + ReconnectBackoff.nanosAfter(refusals);
    }

    /** Refused logins in a row, for tests. */
    synchronized int refusals() {
        return refusals;
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return driver.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        driver.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        driver.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return driver.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return driver.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return type.isInstance(this) ? type.cast(this) : driver.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || driver.isWrapperFor(type);
    }
}
