package dev.sluice.postgres;

import dev.sluice.tck.Eventually;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.PGConnection;

/**
 * The test database's pooled connections, as a limiter under test uses them, watched by the test:
 * <ul>
 * <li>how many are out: none once every attempt of the limiter has ended, so that no statement of it can still reach
 *     the database (a statement the test saw its caller give up on may not have got there yet);</li>
 * <li>with {@link #withoutQueryTimeouts()}, statements ignore their query timeout (the driver's millisecond one and
 *     JDBC's seconds), so that only a caller's cancel can end one waiting for a row lock;</li>
 * <li>{@link #holdNextStatementUntilACancel()} holds the next statement back until a cancel was sent for it, as a
 *     worker thread or a database backend late on a busy machine does: the cancel gets there first, and finds nothing
 *     to cancel.</li>
 * </ul>
 */
final class WatchedConnections extends TestDataSource {
    /** Longer than any wait these tests expect, by far: a hang guard. */
    private static final Duration GUARD = Duration.ofSeconds(20);

    private static final Set<String> EXECUTES = Set.of("execute", "executeQuery", "executeUpdate", "executeBatch");

    private final AtomicInteger out = new AtomicInteger();
    private final AtomicInteger cancels = new AtomicInteger();
    private final AtomicBoolean holdNext = new AtomicBoolean();
    private volatile boolean queryTimeouts = true;

    /** Statements ignore their query timeouts from now on. */
    WatchedConnections withoutQueryTimeouts() {
        queryTimeouts = false;
        return this;
    }

    /** The next statement executed waits, before it is sent, until a cancel was sent (and had its effect) after it. */
    void holdNextStatementUntilACancel() {
        holdNext.set(true);
    }

    /** Waits until every connection handed out came back: no attempt, so no statement, is under way. */
    void awaitAllReturned() {
        Eventually.await(GUARD, "every connection handed out returned", () -> out.get() == 0);
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection real = TestDatabase.dataSource().getConnection();
        out.incrementAndGet();
        AtomicBoolean closed = new AtomicBoolean();
        return proxy(Connection.class, (m, args) -> {
            switch (m.getName()) {
                case "close" -> {
                    if (closed.compareAndSet(false, true)) {
                        try {
                            real.close();
                        } finally {
                            out.decrementAndGet();
                        }
                    }
                    return null;
                }
                case "unwrap" -> {
                    Object r = m.invoke(real, args);
                    return args[0] == PGConnection.class ? counted((PGConnection) r) : r;
                }
                default -> {
                    Object r = m.invoke(real, args);
                    return r instanceof PreparedStatement ps ? watched(ps) : r;
                }
            }
        });
    }

    /** The driver's connection, counting the cancels sent through it. */
    private PGConnection counted(PGConnection pg) {
        return proxy(PGConnection.class, (m, args) -> {
            Object r = m.invoke(pg, args);
            if (m.getName().equals("cancelQuery")) {
                cancels.incrementAndGet();
            }
            return r;
        });
    }

    private PreparedStatement watched(PreparedStatement ps) {
        return proxy(PreparedStatement.class, (m, args) -> {
            String name = m.getName();
            if (!queryTimeouts && name.equals("setQueryTimeout")) {
                return null;
            }
            if (!queryTimeouts && name.equals("isWrapperFor")) {
                return false; // JdbcAttempt then sets JDBC's timeout, which this ignores
            }
            if (EXECUTES.contains(name) && holdNext.compareAndSet(true, false)) {
                awaitACancelAfter(cancels.get());
            }
            Object r = m.invoke(ps, args);
            if (name.equals("cancel")) {
                cancels.incrementAndGet();
            }
            return r;
        });
    }

    private void awaitACancelAfter(int before) {
        Eventually.await(GUARD, "a cancel of the held statement", () -> cancels.get() != before);
    }

    interface Call {
        Object on(Method m, Object[] args) throws Exception;
    }

    private static <T> T proxy(Class<T> type, Call call) {
        return type.cast(Proxy.newProxyInstance(
                WatchedConnections.class.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
                    try {
                        return call.on(m, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                }));
    }
}
