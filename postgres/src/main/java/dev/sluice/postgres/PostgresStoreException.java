package dev.sluice.postgres;

import dev.sluice.Degradation;
import dev.sluice.StoreException;
import org.jspecify.annotations.Nullable;

/**
 * The database could not decide: it is unreachable, its Sluice objects are missing (run
 * {@link PostgresRateLimiter#migrate()}), conflicts outlasted the time budget ({@link RetryPolicy}), or the decision ran
 * past its time budget. The message says which and what to do; {@link #sqlState()} carries the SQLSTATE
 * when the database gave one, and {@link #degradation()} the class a failure policy acts on:
 * <ul>
 * <li>{@code TIMEOUT}: the budget passed with the statement sent (57014 from the limiter's own cancel or
 *     the server's {@code statement_timeout}, a socket that stopped answering, conflicts retried until the
 *     budget ran out);</li>
 * <li>{@code UNAVAILABLE}: the database cannot be reached (SQLSTATE class 08, connection refused or
 *     broken, the server shutting down or starting up, a pool that cannot connect to it);</li>
 * <li>{@code OVERLOADED}: the client side was full with the database alive (no pooled connection, no
 *     queue slot or no worker within the budget); nothing was sent;</li>
 * <li>{@code STORE_ERROR}: the database answered with an error (schema missing, any other SQLSTATE).</li>
 * </ul>
 * Nothing was taken when this is thrown (each attempt commits or rolls back as a whole), unless the
 * connection broke after the commit was sent, which JDBC cannot tell apart.
 */
public class PostgresStoreException extends StoreException {
    private static final long serialVersionUID = 1L;

    private final @Nullable String sqlState;

    public PostgresStoreException(
            String message, @Nullable String sqlState, @Nullable Throwable cause, Degradation degradation) {
        super(message, cause, degradation);
        this.sqlState = sqlState;
    }

    /** The SQLSTATE of the last error, or null. */
    public @Nullable String sqlState() {
        return sqlState;
    }
}
