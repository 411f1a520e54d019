package dev.sluice.postgres;

/**
 * The database could not decide: it is unreachable, its Sluice objects are missing (run
 * {@link PostgresRateLimiter#migrate()}), conflicts outlasted the {@link RetryPolicy}, or the decision ran
 * past its time budget. The message says which and what to do; {@link #sqlState()} carries the SQLSTATE
 * when the database gave one. Nothing was taken when this is thrown (each attempt commits or rolls back
 * as a whole), unless the connection broke after the commit was sent, which JDBC cannot tell apart.
 */
public class PostgresStoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String sqlState;

    public PostgresStoreException(String message, String sqlState, Throwable cause) {
        super(message, cause);
        this.sqlState = sqlState;
    }

    /** The SQLSTATE of the last error, or null. */
    public String sqlState() {
        return sqlState;
    }
}
