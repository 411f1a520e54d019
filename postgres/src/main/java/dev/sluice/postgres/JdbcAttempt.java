package dev.sluice.postgres;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of a decision on one pooled connection: the connection as the pool handed it out, with the attempt's
 * network timeout and autocommit, restored afterwards; every statement with its query timeout to the millisecond
 * (the server cancels it then: SQLSTATE 57014, rolled back) and registered with the call, so that a caller who stops
 * waiting can cancel it.
 */
final class JdbcAttempt {
    /**
     * The margin of a connection's network (socket) timeout over its statement's query timeout. It only
     * bounds how long a worker thread and its connection stay stuck on a database that stopped answering
     * (paused, or its host gone); callers are not held by it. It is wide enough that the server's answer
     * to a cancelled statement (57014) normally arrives first, so a slow database does not cost
     * connections: a socket timeout breaks the connection and the pool has to open a new one.
     */
    static final long NETWORK_MARGIN_MILLIS = 250;

    private JdbcAttempt() {}

    @FunctionalInterface
    interface SqlCall<T> {
        T run(Db c) throws SQLException;
    }

    /**
     * A connection for one attempt, and the decision's deadline (System.nanoTime): every statement is
     * prepared with the time left to it as its query timeout, so a statement past the budget is cancelled
     * by the server (and rolled back: nothing taken) rather than abandoned on a timed-out socket.
     */
    record Db(Connection connection, long deadlineNanos, DecisionCall call) {
        /**
         * A statement whose timeout is the attempt's time left now (a multi-permit runs several), registered with
         * the call so that a caller who stops waiting can cancel it.
         */
        PreparedStatement prepare(String sql) throws SQLException {
            PreparedStatement ps = connection.prepareStatement(sql);
            setQueryTimeoutMillis(ps, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
            call.sending(connection, ps);
            if (call.allAbandoned()) {
                // its callers stopped waiting after the attempt checked, before this statement was there to cancel
                ps.close();
                throw new SQLException(
                        "the caller stopped waiting before the statement was sent: nothing was sent", "57014");
            }
            return ps;
        }
    }

    /** The PostgreSQL driver's statement class and its millisecond query timeout, when that driver is there. */
    private static final @Nullable Class<?> PG_STATEMENT;

    private static final @Nullable MethodHandle SET_QUERY_TIMEOUT_MS;

    /** The PostgreSQL driver's connection interface and its cancel, when that driver is there. */
    private static final @Nullable Class<?> PG_CONNECTION;

    private static final @Nullable MethodHandle CANCEL_QUERY;

    static {
        Class<?> type = null;
        MethodHandle handle = null;
        try {
            type = Class.forName("org.postgresql.jdbc.PgStatement");
            handle = MethodHandles.publicLookup()
                    .findVirtual(type, "setQueryTimeoutMs", MethodType.methodType(void.class, long.class));
        } catch (ReflectiveOperationException | LinkageError | SecurityException e) {
            type = null; // another driver: JDBC's whole seconds
        }
        PG_STATEMENT = type;
        SET_QUERY_TIMEOUT_MS = handle;
        type = null;
        handle = null;
        try {
            type = Class.forName("org.postgresql.PGConnection");
            handle = MethodHandles.publicLookup().findVirtual(type, "cancelQuery", MethodType.methodType(void.class));
        } catch (ReflectiveOperationException | LinkageError | SecurityException e) {
            type = null; // another driver: Statement.cancel
        }
        PG_CONNECTION = type;
        CANCEL_QUERY = handle;
    }

    /**
     * Asks the server to cancel what {@code c} runs now, {@code st}. The server ignores a cancel that reaches it
     * before the statement does (its backend is waiting for a command then), so a caller sends it again until the
     * statement is over ({@link DecisionCall#cancel}). With the PostgreSQL driver that takes the connection's
     * {@code cancelQuery}, which sends a cancel each time it is called: {@code Statement.cancel} sends nothing for a
     * statement whose execution has not begun and at most one per execution. The caller makes sure that the
     * connection runs nothing but {@code st} meanwhile. With another driver, {@code Statement.cancel}.
     */
    static void cancel(Connection c, Statement st) throws SQLException {
        Class<?> type = PG_CONNECTION;
        MethodHandle cancelQuery = CANCEL_QUERY;
        if (type != null && cancelQuery != null && c.isWrapperFor(type)) {
            try {
                cancelQuery.invoke(c.unwrap(type));
                return;
            } catch (SQLException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new SQLException("cannot cancel the statement", e);
            }
        }
        st.cancel();
    }

    /**
     * The statement's timeout to the millisecond with the PostgreSQL driver (when it passes, the driver
     * asks the server to cancel the statement: SQLSTATE 57014, rolled back); with any other driver JDBC's
     * {@code setQueryTimeout}, whole seconds, rounded up.
     */
    static void setQueryTimeoutMillis(Statement st, long millis) throws SQLException {
        Class<?> type = PG_STATEMENT;
        MethodHandle setTimeout = SET_QUERY_TIMEOUT_MS;
        if (type != null && setTimeout != null && st.isWrapperFor(type)) {
            Object pg = st.unwrap(type);
            if (type.isInstance(pg)) { // a proxying wrapper may hand back another proxy
                try {
                    setTimeout.invoke(pg, millis);
                    return;
                } catch (SQLException | RuntimeException | Error e) {
                    throw e;
                } catch (Throwable e) {
                    throw new SQLException("cannot set the query timeout", e);
                }
            }
        }
        st.setQueryTimeout((int) Math.min(Integer.MAX_VALUE, (millis + 999) / 1000));
    }

    private static final Executor DIRECT = Runnable::run;

    /**
     * One attempt on a pooled connection, left as it was handed out: autocommit on for the attempt (a pool
     * handing out connections with autocommit off, as HikariCP or Spring with {@code autoCommit=false} do,
     * would otherwise roll every decision back when the connection is returned), and the network timeout
     * set for the attempt; both are restored before the connection goes back to the pool.
     */
    static <T> T attempt(Connection c, long deadline, long leftMillis, DecisionCall owner, SqlCall<T> call)
            throws SQLException {
        boolean autoCommitWasOff = !c.getAutoCommit();
        if (autoCommitWasOff) {
            c.setAutoCommit(true); // no transaction is open on a connection just taken from the pool
        }
        int savedNetworkTimeout = -1;
        try {
            savedNetworkTimeout = c.getNetworkTimeout();
            // the server cancels a statement at the time left (the driver sends the cancel when it passes);
            // the socket timeout, NETWORK_MARGIN_MILLIS later, only catches a server that stopped answering
            // at all; it frees this worker and its connection, the caller stopped waiting at the budget
            c.setNetworkTimeout(DIRECT, (int) Math.min(Integer.MAX_VALUE, leftMillis + NETWORK_MARGIN_MILLIS));
            try {
                return call.run(new Db(c, deadline, owner));
            } finally {
                owner.attemptEnded(); // no cancel for this attempt after this: the connection goes back to the pool
            }
        } finally {
            try {
                if (savedNetworkTimeout >= 0) {
                    c.setNetworkTimeout(DIRECT, savedNetworkTimeout);
                }
                if (autoCommitWasOff) {
                    c.setAutoCommit(false);
                }
            } catch (SQLException ignored) {
                // the connection is broken; the pool discards it
            }
        }
    }
}
