package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * One statement per decision, counted on the wire side of JDBC: every execute* call on every statement
 * the limiter opens is one round trip with the PostgreSQL driver (commit/rollback are counted too).
 */
class RoundTripTest {

    private static final Set<String> EXECUTES = Set.of(
            "execute", "executeQuery", "executeUpdate", "executeBatch", "executeLargeUpdate", "commit", "rollback");

    /** A DataSource that counts statements executed, commits and rollbacks. */
    static final class CountingDataSource implements DataSource {
        final DataSource target;
        final AtomicInteger calls = new AtomicInteger();

        CountingDataSource(DataSource target) {
            this.target = target;
        }

        private Object wrap(Object o, Class<?> type) {
            InvocationHandler h = (proxy, m, args) -> {
                if (EXECUTES.contains(m.getName())) {
                    calls.incrementAndGet();
                }
                try {
                    Object r = m.invoke(o, args);
                    if (r instanceof PreparedStatement) {
                        return wrap(r, PreparedStatement.class);
                    }
                    if (r instanceof Statement) {
                        return wrap(r, Statement.class);
                    }
                    return r;
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            };
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, h);
        }

        @Override
        public Connection getConnection() throws SQLException {
            return (Connection) wrap(target.getConnection(), Connection.class);
        }

        @Override
        public Connection getConnection(String u, String p) throws SQLException {
            return (Connection) wrap(target.getConnection(u, p), Connection.class);
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return target.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            target.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            target.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return target.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return target.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return target.isWrapperFor(iface);
        }
    }

    @Test
    void everySinglePermitDecisionIsOneStatement() {
        CountingDataSource ds = new CountingDataSource(TestDatabase.dataSource());
        String k = "rt:" + UUID.randomUUID();
        List<Limit> limits = List.of(
                Limit.tokenBucket(3, Rate.perSecond(1)),
                Limit.gcra(Rate.perSecond(1), 3),
                Limit.fixedWindow(3, Duration.ofSeconds(10)),
                Limit.slidingWindow(3, Duration.ofSeconds(10)),
                Limit.slidingLog(3, Duration.ofSeconds(10)));
        try (PostgresRateLimiter rl = TestDatabase.limiter(ds)) {
            ds.calls.set(0); // build() made its warm-up round trips
            int decisions = 0;
            for (Limit l : limits) {
                for (int i = 0; i < 5; i++) { // first call (insert), allowed (update) and denied (no write)
                    rl.tryAcquire(k, l);
                    decisions++;
                }
            }
            rl.reserve(k, limits.get(0), 1, Duration.ofSeconds(5));
            decisions++;
            assertThat(ds.calls.get()).isEqualTo(decisions);
            ds.calls.set(0);
            // multi-permit over two tables: per table one lock statement and one batch of writes, one commit
            rl.tryAcquire(List.of(
                    Permit.of(k + ":a", limits.get(0)),
                    Permit.of(k + ":b", limits.get(0)),
                    Permit.of(k + ":c", limits.get(2))));
            assertThat(ds.calls.get()).isEqualTo(2 + 2 + 1);
        }
    }

    /**
     * The server side agrees (track_functions = pl): in a schema of its own, so no other test's calls
     * count, the acquire function ran exactly once per decision.
     */
    @Test
    void theServerCountsOneFunctionCallPerDecision() {
        String schema = "rt_" + UUID.randomUUID().toString().substring(0, 8);
        Limit l = Limit.fixedWindow(30, Duration.ofHours(1));
        try (PostgresRateLimiter rl =
                TestDatabase.builder(TestDatabase.dataSource()).schema(schema).build()) {
            rl.migrate();
            for (int i = 0; i < 50; i++) {
                rl.tryAcquire("k" + (i % 3), l);
            }
            // statistics reach the view when the backend reports them (at most once a second)
            Eventually.await(Duration.ofSeconds(10), "the backends' statistics reported", () -> calls(schema) >= 50);
            assertThat(calls(schema)).isEqualTo(50);
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    private static long calls(String schema) {
        Long n = TestDatabase.queryLong(
                "select coalesce(sum(calls), 0) from pg_stat_user_functions"
                        + " where schemaname = ? and funcname = 'sluice_window_acquire'",
                schema);
        return n == null ? 0 : n;
    }
}
