package dev.sluice.postgres;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import java.io.EOFException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * What a PostgreSQL failure means for a decision, in one place: SQLSTATE classes, driver and pool exceptions, and
 * the decisions that were never sent become a {@link PostgresStoreException} whose {@link Degradation} says whether
 * the database timed out, cannot be reached, is fine while the client side is full ({@code OVERLOADED}), or
 * answered with an error, with a message that says what to do. A decision that could not even be sent carries the
 * database's own trouble when it was last seen failing ({@link DatabaseHealth}): the waits are its symptom.
 */
final class PostgresFailures {
    private final String schema;
    private final String prefix;
    private final Duration budget;
    private final DatabaseHealth health;

    PostgresFailures(String schema, String prefix, Duration budget, DatabaseHealth health) {
        this.schema = schema;
        this.prefix = prefix;
        this.budget = budget;
        this.health = health;
    }

    /**
     * A decision that failed before anything was sent: OVERLOADED while the database was last seen
     * healthy (the pool, the workers or the queue are too small for the load), else the database's own
     * trouble, which is why nothing could be sent.
     */
    PostgresStoreException notSent(String what, @Nullable Throwable cause) {
        Degradation d = health.lastSeen();
        if (d == Degradation.NONE) {
            return new PostgresStoreException(
                    what + "; the database is up but the client side is full: raise the"
                            + " pool size, Builder.threads or Builder.maxQueuedDecisions, or shed load",
                    null,
                    cause,
                    Degradation.OVERLOADED);
        }
        return new PostgresStoreException(
                what + "; the database was last seen "
                        + (d == Degradation.TIMEOUT
                                ? "not answering in time (slow or paused)"
                                : d == Degradation.MISCONFIGURED
                                        ? "refusing this client's login or privileges"
                                        : "unreachable (down or restarting)")
                        + ": check the database",
                null,
                cause,
                d);
    }

    /**
     * Why the DataSource gave no connection. The login, database or address refused ({@link #refusal}): a
     * misconfiguration; the database down or restarting (class 08, refused, reset, 57P0x), a pool that timed out
     * because it could not connect (HikariCP then gives the last connection failure as the cause): UNAVAILABLE; a
     * login that timed out: TIMEOUT; a pool that timed out with the database up (no cause), or the server's
     * {@code too_many_connections}: OVERLOADED; anything else (a closed pool): STORE_ERROR.
     */
    PostgresStoreException connectionFailure(SQLException e) {
        String state = sqlState(e);
        String refused = refusal(e);
        if (refused != null) {
            health.seen(Degradation.MISCONFIGURED);
            return new PostgresStoreException(
                    "cannot get a PostgreSQL connection from the DataSource: the database " + refused,
                    stateOfRefusal(e, state),
                    e,
                    Degradation.MISCONFIGURED);
        }
        Degradation d;
        if (isTimeout(e)) {
            d = Degradation.TIMEOUT;
        } else if (isUnreachable(e, state)) {
            d = Degradation.UNAVAILABLE;
        } else if ("53300".equals(state)
                || (e instanceof SQLTransientConnectionException && state == null && e.getCause() == null)) {
            d = health.lastSeen() != Degradation.NONE ? health.lastSeen() : Degradation.OVERLOADED;
        } else {
            d = Degradation.STORE_ERROR;
        }
        if (d.storeUnhealthy()) {
            health.seen(d);
        }
        return new PostgresStoreException(
                "cannot get a PostgreSQL connection from the DataSource ("
                        + e.getMessage() + ", SQLSTATE " + state + "): "
                        + (d == Degradation.OVERLOADED
                                ? "the pool has no free connection; raise its size or shed load"
                                : "check that the database is up and the URL, user and password are right"),
                state,
                e,
                d);
    }

    /** Class 08, the server shutting down or starting (57P01-57P03), or a refused, reset or closed socket. */
    static boolean isUnreachable(Throwable e, @Nullable String state) {
        if (state != null && (state.startsWith("08") || state.startsWith("57P"))) {
            return true;
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketException || t instanceof EOFException || t instanceof UnknownHostException) {
                return true;
            }
            if (t instanceof SQLException s
                    && s.getSQLState() != null
                    && (s.getSQLState().startsWith("08") || s.getSQLState().startsWith("57P"))) {
                return true;
            }
        }
        return false;
    }

    PostgresStoreException translate(
            SQLException e, @Nullable String state, long elapsedNanos, @Nullable String key, @Nullable Limit limit) {
        String cause = e.getMessage() + " (SQLSTATE " + state + ")";
        if ("42P01".equals(state) || "42883".equals(state) || "3F000".equals(state)) {
            return new PostgresStoreException(
                    "Sluice's tables or functions are missing in schema " + schema
                            + " (prefix " + prefix
                            + "): run PostgresRateLimiter.migrate() once (sluice migrate), or apply the"
                            + " SQL files dev/sluice/postgres/001_tables.sql … 006_seed_function.sql with psql -f; "
                            + cause,
                    state,
                    e,
                    Degradation.MISCONFIGURED);
        }
        String refused = refusal(e);
        if (refused != null) {
            return new PostgresStoreException(
                    "the database " + refused + KeyText.about(key, limit), state, e, Degradation.MISCONFIGURED);
        }
        if ("57014".equals(state)) {
            // the driver's cancel at the budget, or the server's own statement_timeout: rolled back either way
            return new PostgresStoreException(
                    "the decision" + KeyText.about(key, limit) + " was cancelled by the server after "
                            + TimeUnit.NANOSECONDS.toMillis(elapsedNanos) + " ms (its time budget is "
                            + budget.toMillis() + " ms, or the role's statement_timeout is shorter), so nothing"
                            + " was taken (" + cause
                            + "): the row is contended or the database slow; raise RetryPolicy.budget"
                            + " or check the database",
                    state,
                    e,
                    Degradation.TIMEOUT);
        }
        if (isTimeout(e)) {
            return new PostgresStoreException(
                    "the decision" + KeyText.about(key, limit) + " got no answer on its connection"
                            + " within its time budget of " + budget.toMillis() + " ms + "
                            + JdbcAttempt.NETWORK_MARGIN_MILLIS
                            + " ms (" + cause + "): the database stopped answering; check it",
                    state,
                    e,
                    Degradation.TIMEOUT);
        }
        if (isUnreachable(e, state)) {
            return new PostgresStoreException(
                    "lost the connection to PostgreSQL" + KeyText.about(key, limit) + ": " + cause
                            + "; check that the database is up",
                    state,
                    e,
                    Degradation.UNAVAILABLE);
        }
        if (elapsedNanos >= budget.toNanos()) {
            return new PostgresStoreException(
                    "the decision" + KeyText.about(key, limit) + " ran past its time budget of "
                            + budget.toMillis() + " ms (" + cause + "): the database is slow or the row"
                            + " is locked; raise RetryPolicy.budget or check the database",
                    state,
                    e,
                    Degradation.TIMEOUT);
        }
        return new PostgresStoreException(
                "PostgreSQL failed" + KeyText.about(key, limit) + ": " + cause, state, e, Degradation.STORE_ERROR);
    }

    private static final String CREDENTIALS = "fix the user and password in the URL (user=…&password=… or"
            + " postgresql://user:password@host/database), or the role's password in PostgreSQL";

    /**
     * What the database (or whatever answers at its address) refused of this client's configuration, with the fix,
     * or null when the failure is an outage: the password or the role (28P01, 28000: also pg_hba.conf refusing the
     * client, or its encryption), a database that does not exist (3D000), a privilege (42501), a server refusing
     * SSL that the URL requires (08004), a host name that does not resolve, a failed TLS handshake
     * (sslmode=verify-full without the CA). SQLSTATEs are the contract; the text is only quoted.
     */
    static @Nullable String refusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String state = t instanceof SQLException s ? sqlState(s) : null;
            String m = String.valueOf(t.getMessage());
            if ("28P01".equals(state)) {
                return "refused the password (" + m + ", SQLSTATE 28P01): " + CREDENTIALS;
            }
            if ("28000".equals(state)) {
                return "refused this client (" + m + ", SQLSTATE 28000): check the user name, and that pg_hba.conf"
                        + " admits it from this host with this encryption (sslmode)";
            }
            if ("3D000".equals(state)) {
                return "has no such database (" + m + ", SQLSTATE 3D000): check the database name in the URL, or"
                        + " create it";
            }
            if ("42501".equals(state)) {
                return "refused a privilege Sluice needs (" + m + ", SQLSTATE 42501): grant the role USAGE and CREATE"
                        + " on its schema (to migrate) and SELECT, INSERT, UPDATE, DELETE on Sluice's tables and"
                        + " EXECUTE on its functions, or run sluice migrate as the schema's owner";
            }
            if ("08004".equals(state)) {
                return "refused the connection as the URL asks for it (" + m + ", SQLSTATE 08004): check sslmode"
                        + " in the URL against the server's ssl setting";
            }
            if (t instanceof UnknownHostException) {
                return "host does not resolve (" + m + "): check the host name in the URL";
            }
            if (t instanceof SSLException) {
                return "failed the TLS handshake (" + m + "): check sslmode and the server's certificate (sslrootcert)";
            }
        }
        return null;
    }

    private static final Set<String> REFUSALS = Set.of("28P01", "28000", "3D000", "42501", "08004");

    /** The SQLSTATE of the refusal in {@code e}'s causes (HikariCP wraps the driver's), else {@code state}. */
    private static @Nullable String stateOfRefusal(Throwable e, @Nullable String state) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s && REFUSALS.contains(s.getSQLState())) {
                return s.getSQLState();
            }
        }
        return state;
    }

    static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    static @Nullable String sqlState(SQLException e) {
        for (SQLException x = e; x != null; x = x.getNextException()) {
            if (x.getSQLState() != null) {
                return x.getSQLState();
            }
        }
        return null;
    }
}
