package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Connections from a pool configured like HikariCP or Spring with {@code autoCommit=false}: handed out
 * with autocommit off, rolled back when returned. Every decision, reset and cleaner delete must still
 * persist, and each connection must go back to the pool as it was handed out (autocommit, network timeout).
 */
class PooledConnectionStateTest {
    /** 2030-01-01T00:00:00Z: later than any row other tests leave. */
    private static final long T = 1_893_456_000L * 1_000_000_000L;

    /** Hands out connections with autocommit off; on close rolls back (as HikariCP does) and notes what changed. */
    static final class AutoCommitOffDataSource extends TestDataSource {
        final DataSource target;
        final List<String> leaks = new CopyOnWriteArrayList<>();

        AutoCommitOffDataSource(DataSource target) {
            this.target = target;
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection c = target.getConnection();
            c.setAutoCommit(false);
            int networkTimeout = c.getNetworkTimeout();
            return (Connection) Proxy.newProxyInstance(
                    Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                        if (m.getName().equals("close")) {
                            if (c.isClosed()) {
                                return null;
                            }
                            if (c.getAutoCommit()) {
                                leaks.add("returned with autocommit on");
                            }
                            if (c.getNetworkTimeout() != networkTimeout) {
                                leaks.add("returned with network timeout " + c.getNetworkTimeout() + " ms instead of "
                                        + networkTimeout);
                            }
                            if (!c.getAutoCommit()) {
                                c.rollback(); // what the pool does with a connection that was not committed
                            }
                            c.setAutoCommit(true);
                            c.close();
                            return null;
                        }
                        try {
                            return m.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    private static String key() {
        return "pool-" + UUID.randomUUID();
    }

    @Test
    void decisionsPersistWhenThePoolHandsOutAutocommitOff() {
        AutoCommitOffDataSource ds = new AutoCommitOffDataSource(TestDatabase.dataSource());
        Limit one = Limit.tokenBucket(1, Rate.perHour(1));
        Limit window = Limit.fixedWindow(1, Duration.ofHours(1));
        Limit log = Limit.slidingLog(1, Duration.ofHours(1));
        try (PostgresRateLimiter rl = TestDatabase.builder(ds).build()) {
            String k = key();
            assertThat(rl.tryAcquire(k, one).allowed()).isTrue();
            assertThat(rl.tryAcquire(k, one).allowed())
                    .as("the first call's token stays taken")
                    .isFalse();
            assertThat(rl.peek(k, one).allowed()).isFalse();
            assertThat(rl.peek(key(), one).allowed())
                    .as("a peek at an unknown key")
                    .isTrue();
            assertThat(rl.tryAcquire(k, window).allowed()).isTrue();
            assertThat(rl.tryAcquire(k, window).allowed()).isFalse();
            assertThat(rl.tryAcquire(k, log).allowed()).isTrue();
            assertThat(rl.tryAcquire(k, log).allowed()).isFalse();
            assertThat(rl.reserve(key(), Limit.gcra(Rate.perHour(1), 1), 1, Duration.ZERO)
                            .allowed())
                    .isTrue();
            String k2 = key();
            assertThat(rl.tryAcquire(List.of(Permit.of(k2, one), Permit.of(k2, window)))
                            .allowed())
                    .isTrue();
            assertThat(rl.tryAcquire(k2, one).allowed()).isFalse();
            assertThat(rl.tryAcquireAsync(k2, window, 1).join().allowed()).isFalse();
        }
        assertThat(ds.leaks).as("connections go back as they were handed out").isEmpty();
    }

    @Test
    void batchedDecisionsPersistWhenThePoolHandsOutAutocommitOff() {
        AutoCommitOffDataSource ds = new AutoCommitOffDataSource(TestDatabase.dataSource());
        Limit one = Limit.tokenBucket(1, Rate.perHour(1));
        try (PostgresRateLimiter rl = TestDatabase.builder(ds).batching(16, 2).build()) {
            String k = key();
            assertThat(rl.tryAcquire(k, one).allowed()).isTrue();
            assertThat(rl.tryAcquire(k, one).allowed())
                    .as("the first call's token stays taken")
                    .isFalse();
            List<Boolean> many = java.util.stream.IntStream.range(0, 20)
                    .parallel()
                    .mapToObj(i -> rl.tryAcquireAsync("many-" + k, Limit.tokenBucket(5, Rate.perHour(1)), 1))
                    .toList()
                    .stream()
                    .map(f -> f.join().allowed())
                    .toList();
            assertThat(many.stream().filter(b -> b).count()).isEqualTo(5);
        }
        assertThat(ds.leaks).isEmpty();
    }

    @Test
    void resetPersistsWhenThePoolHandsOutAutocommitOff() {
        AutoCommitOffDataSource ds = new AutoCommitOffDataSource(TestDatabase.dataSource());
        Limit one = Limit.tokenBucket(1, Rate.perHour(1));
        String k = key();
        try (PostgresRateLimiter plain = TestDatabase.limiter(TestDatabase.dataSource());
                PostgresRateLimiter rl = TestDatabase.builder(ds).build()) {
            assertThat(plain.tryAcquire(k, one).allowed()).isTrue();
            assertThat(plain.tryAcquire(k, one).allowed()).isFalse();
            rl.reset(k, one);
            assertThat(plain.tryAcquire(k, one).allowed())
                    .as("reset gave the bucket back")
                    .isTrue();
        }
        assertThat(ds.leaks).isEmpty();
    }

    @Test
    void cleanerDeletesPersistWhenThePoolHandsOutAutocommitOff() {
        String schema = "pool_" + UUID.randomUUID().toString().substring(0, 8);
        ManualTicker t = ManualTicker.atEpochNanos(T);
        AutoCommitOffDataSource ds = new AutoCommitOffDataSource(TestDatabase.dataSource());
        Limit shortBucket = Limit.tokenBucket(1, Rate.perSecond(1));
        try (PostgresRateLimiter plain = TestDatabase.builder(TestDatabase.dataSource())
                        .schema(schema)
                        .ticker(t)
                        .build();
                PostgresRateLimiter rl =
                        TestDatabase.builder(ds).schema(schema).ticker(t).build()) {
            plain.migrate();
            for (int i = 0; i < 10; i++) {
                plain.tryAcquire("k-" + i, shortBucket);
            }
            t.advance(Duration.ofSeconds(2));
            assertThat(rl.manualCleaner(1_000, 10).sweep()).isEqualTo(10);
            assertThat(TestDatabase.queryLong("select count(*) from " + schema + ".sluice_bucket"))
                    .as("the cleaner's deletes were committed")
                    .isZero();
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
        assertThat(ds.leaks).isEmpty();
    }
}
