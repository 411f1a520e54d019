package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.tck.Eventually;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A real PostgreSQL whose processes this test controls ({@link RestartablePostgres}): killed with SIGKILL and
 * restarted, paused with SIGSTOP and resumed, its pool exhausted, its {@code statement_timeout} firing, under
 * {@value #THREADS} threads of load through a {@link FailSafeRateLimiter} for each policy, with the store's default
 * budget. It asserts behaviour only:
 * <ul>
 * <li>no call threw and none hung (every call of the load returns: the load keeps making progress);</li>
 * <li>the policy decided while the store could not, with the cause the fault implies;</li>
 * <li>decisions are the store's and exact again (a fresh key admits exactly its capacity) once the server is back
 *     (polled, with a generous deadline);</li>
 * <li>20 kill/restart cycles leave no more of the limiter's, the pool's and the driver's threads, and as many
 *     server connections, as before.</li>
 * </ul>
 * How long calls take while the store is down or paused, and how soon decisions are exact again, are measured by
 * the fault benchmark ({@code bench/README.md}, "Faults"), not asserted here: the suite runs on busy machines.
 */
class PostgresFaultTest {

    static final int THREADS = 4;
    static final Duration PROBE = Duration.ofMillis(100);
    /** How long the tests poll for exact decisions after the server is back: a hang guard, not a target. */
    static final Duration RECOVERY = Duration.ofSeconds(60);

    static final int POOL_SIZE = 8;

    /** The application_name of the pools' connections, which {@link #serverConnections()} counts. */
    static final String APPLICATION = "sluice-fault-test";

    static RestartablePostgres pg;
    /**
     * FailSafeRateLimiter logs a WARNING on the calling thread when its circuit opens; under surefire on a
     * busy machine the write to stderr held callers up to 170 ms (reported to its owner). This test is
     * about the PostgreSQL store's bound, so that logger is quiet here; held so the setting is not collected.
     */
    static final java.util.logging.Logger FAIL_SAFE_LOG =
            java.util.logging.Logger.getLogger(FailSafeRateLimiter.class.getName());

    @BeforeAll
    static void startServer() throws Exception {
        FAIL_SAFE_LOG.setLevel(java.util.logging.Level.OFF);
        pg = RestartablePostgres.start(Map.of(
                "max_connections",
                "60",
                "fsync",
                "off",
                "synchronous_commit",
                "off",
                "full_page_writes",
                "off",
                "shared_buffers",
                "16MB"));
        try (HikariDataSource ds = pool(2, null);
                PostgresRateLimiter rl = TestDatabase.limiter(ds)) {
            rl.migrate();
        }
    }

    @AfterAll
    static void stopServer() {
        if (pg != null) {
            pg.close();
        }
        FAIL_SAFE_LOG.setLevel(null);
    }

    /** The pool as the README recommends for a bounded store: HikariCP's floors, short driver timeouts. */
    static HikariDataSource pool(int size, String initSql) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(pg.jdbcUrl() + "?connectTimeout=1&loginTimeout=1&cancelSignalTimeout=1&tcpKeepAlive=true"
                + "&ApplicationName=" + APPLICATION);
        c.setUsername("postgres");
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size);
        c.setConnectionTimeout(250);
        c.setValidationTimeout(250);
        c.setInitializationFailTimeout(-1); // start even while the database is down
        c.setPoolName("fault-" + size);
        if (initSql != null) {
            c.setConnectionInitSql(initSql);
        }
        return new HikariDataSource(c);
    }

    static PostgresRateLimiter store(HikariDataSource ds) {
        return PostgresRateLimiter.builder(ds).threads(POOL_SIZE).build(); // the default budget
    }

    static FailSafeRateLimiter failSafe(PostgresRateLimiter store, FailurePolicy policy) {
        return FailSafeRateLimiter.builder(store)
                .policy(policy)
                .probeInterval(PROBE)
                .build();
    }

    // ------------------------------------------------------------------ load

    /** {@value #THREADS} threads calling tryAcquire on keys of their own. */
    static final class Load implements AutoCloseable {
        static final Limit LIMIT = Limit.tokenBucket(20, Rate.perHour(1));

        final FailSafeRateLimiter limiter;
        final String prefix = "load-" + UUID.randomUUID() + "-";
        final List<Thread> threads = new ArrayList<>();
        final LongAdder calls = new LongAdder();
        final Map<Degradation, LongAdder> causes = new EnumMap<>(Degradation.class);
        final LongAdder degradedAllowed = new LongAdder();
        final LongAdder degradedDenied = new LongAdder();
        /** Per key, the calls the fallback admitted while degraded. */
        final Map<String, LongAdder> degradedAllowedByKey = new ConcurrentHashMap<>();

        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        volatile boolean running = true;

        Load(FailSafeRateLimiter limiter) {
            this.limiter = limiter;
            for (Degradation d : Degradation.values()) {
                causes.put(d, new LongAdder());
            }
            for (int i = 0; i < THREADS; i++) {
                String key = prefix + i;
                Thread t = new Thread(() -> run(key), "fault-load-" + i);
                t.setDaemon(true);
                threads.add(t);
            }
            threads.forEach(Thread::start);
        }

        private void run(String key) {
            while (running) {
                try {
                    Decision d = limiter.tryAcquire(key, LIMIT);
                    calls.increment();
                    causes.get(d.degradation()).increment();
                    if (d.degraded()) {
                        (d.allowed() ? degradedAllowed : degradedDenied).increment();
                        if (d.allowed()) {
                            degradedAllowedByKey
                                    .computeIfAbsent(key, k -> new LongAdder())
                                    .increment();
                        }
                    }
                    Thread.sleep(1); // a steady trickle, not a spin while the circuit answers in microseconds
                } catch (InterruptedException e) {
                    return;
                } catch (Throwable e) {
                    errors.add(e);
                }
            }
        }

        /** Forgets what was counted so far (the warm-up), keeping the load running. */
        void resetCounts() {
            calls.reset();
            causes.values().forEach(LongAdder::reset);
            degradedAllowed.reset();
            degradedDenied.reset();
            degradedAllowedByKey.clear();
        }

        long count(Degradation d) {
            return causes.get(d).sum();
        }

        String summary() {
            return calls.sum() + " calls, causes " + causes + ", errors " + errors;
        }

        @Override
        public void close() {
            running = false;
            try {
                for (Thread t : threads) {
                    t.join(5_000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits until the load has made {@code n} more calls. */
    static void awaitCalls(Load load, long n) {
        long target = load.calls.sum() + n;
        Eventually.await(
                Duration.ofSeconds(60), "the load making " + n + " more calls", () -> load.calls.sum() >= target);
    }

    /**
     * Waits until the store has decided {@code n} more of the load's calls: a new pool connects, and each
     * new backend compiles the PL/pgSQL functions on first use.
     */
    static void awaitStoreDeciding(Load load, long n) {
        long target = load.count(Degradation.NONE) + n;
        Eventually.await(
                Duration.ofSeconds(60),
                "the store deciding " + n + " more of the load's calls",
                () -> load.count(Degradation.NONE) >= target);
    }

    /**
     * The outage lasts until the policy has decided {@code n} of the load's calls for {@code cause} (a killed server
     * is unavailable, a paused one times out): what the test asserts on, not a length of time.
     */
    static void awaitDegraded(Load load, Degradation cause, long n) {
        long target = load.count(cause) + n;
        Eventually.await(
                Duration.ofSeconds(60),
                "the policy deciding " + n + " of the load's calls (" + cause + ")",
                () -> load.count(cause) >= target);
    }

    /**
     * Polls, from the moment the store is back, until a fresh key admits exactly its capacity with every
     * decision the store's; returns how long that took.
     */
    static Duration awaitExactDecisions(FailSafeRateLimiter limiter, long backNanos) {
        Limit limit = Limit.tokenBucket(5, Rate.perHour(1));
        AtomicInteger allowedOfTheLastKey = new AtomicInteger();
        Eventually.await(RECOVERY, "exact decisions again: a fresh key decided by the store alone", () -> {
            String key = "exact-" + UUID.randomUUID();
            int allowed = 0;
            boolean storeDecided = true;
            for (int i = 0; i < 8 && storeDecided; i++) {
                Decision d = limiter.tryAcquire(key, limit);
                storeDecided = !d.degraded();
                allowed += d.allowed() ? 1 : 0;
            }
            allowedOfTheLastKey.set(allowed);
            return storeDecided;
        });
        assertThat(allowedOfTheLastKey.get())
                .as("a fresh key of capacity 5 admits exactly 5 of 8")
                .isEqualTo(5);
        return Duration.ofNanos(System.nanoTime() - backNanos);
    }

    /** What each policy must have decided while the store could not. */
    static void assertPolicyApplied(FailurePolicy policy, Load load) {
        long degraded = load.degradedAllowed.sum() + load.degradedDenied.sum();
        assertThat(degraded)
                .as("decisions made by the policy: %s", load.summary())
                .isPositive();
        switch (policy) {
            case FAIL_OPEN ->
                assertThat(load.degradedDenied.sum())
                        .as("fail-open denies nothing")
                        .isZero();
            case FAIL_CLOSED ->
                assertThat(load.degradedAllowed.sum())
                        .as("fail-closed allows nothing")
                        .isZero();
            case FALLBACK_LOCAL ->
                load.degradedAllowedByKey.forEach((key, n) -> assertThat(n.sum())
                        .as("the local fallback admits at most the capacity of %s", key)
                        .isLessThanOrEqualTo(Load.LIMIT.capacity()));
        }
        assertThat(load.count(Degradation.STORE_ERROR))
                .as("no fault here is the store answering with an error")
                .isZero();
    }

    static void assertNoCallThrew(Load load) {
        assertThat(load.errors).as("no call threw: %s", load.summary()).isEmpty();
    }

    /** Runs {@code fault} under load, then {@code recover}, and checks the calls, the policy and the recovery. */
    static Load underLoad(
            FailurePolicy policy,
            Consumer<RestartablePostgres> fault,
            Consumer<RestartablePostgres> recover,
            Degradation outageCause)
            throws Exception {
        try (HikariDataSource ds = pool(POOL_SIZE, null);
                FailSafeRateLimiter limiter = failSafe(store(ds), policy)) {
            awaitPoolFull(ds);
            Load load = new Load(limiter);
            try {
                awaitStoreDeciding(load, 100);
                load.resetCounts();
                fault.accept(pg);
                awaitDegraded(load, outageCause, 20);
                recover.accept(pg);
                long back = System.nanoTime();
                Duration recovered = awaitExactDecisions(limiter, back);
                awaitCalls(load, 20);
                load.close();
                System.out.printf(
                        "PostgresFaultTest %s: exact again %d ms after the store was back; %s%n",
                        policy, recovered.toMillis(), load.summary());
                assertNoCallThrew(load);
                assertPolicyApplied(policy, load);
                return load;
            } finally {
                load.close();
                if (pg.paused()) {
                    pg.resume();
                }
            }
        }
    }

    static void restart(RestartablePostgres server) {
        try {
            server.restart();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------ the faults

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void killedAndRestarted(FailurePolicy policy) throws Exception {
        Load load = underLoad(policy, RestartablePostgres::kill, PostgresFaultTest::restart, Degradation.UNAVAILABLE);
        assertThat(load.count(Degradation.UNAVAILABLE))
                .as("a killed server is unavailable: %s", load.summary())
                .isPositive();
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void pausedAndResumed(FailurePolicy policy) throws Exception {
        Load load = underLoad(policy, RestartablePostgres::pause, RestartablePostgres::resume, Degradation.TIMEOUT);
        assertThat(load.count(Degradation.TIMEOUT))
                .as("a paused server times out: %s", load.summary())
                .isPositive();
    }

    @Test
    void twentyKillRestartCyclesLeakNoThreadsAndNoConnections() throws Exception {
        int threadsBeforePool = ownThreadCount();
        try (HikariDataSource ds = pool(POOL_SIZE, null);
                FailSafeRateLimiter limiter = failSafe(store(ds), FailurePolicy.FALLBACK_LOCAL)) {
            awaitPoolFull(ds);
            try (Load warm = new Load(limiter)) {
                awaitStoreDeciding(warm, 200); // every worker thread and pooled connection in use
            }
            awaitPoolFull(ds);
            int threadsBefore = ownThreadCount();
            long connectionsBefore = serverConnections();
            Load load = new Load(limiter);
            long worstRecovery = 0;
            long worstRestart = 0;
            try {
                for (int cycle = 0; cycle < 20; cycle++) {
                    awaitCalls(load, 10);
                    pg.kill();
                    awaitCalls(load, 10);
                    long restart = System.nanoTime();
                    pg.restart();
                    long back = System.nanoTime();
                    worstRestart = Math.max(worstRestart, TimeUnit.NANOSECONDS.toMillis(back - restart));
                    worstRecovery = Math.max(
                            worstRecovery, awaitExactDecisions(limiter, back).toMillis());
                }
            } finally {
                load.close();
            }
            awaitPoolFull(ds);
            int threadsAfter = awaitThreadCount(threadsBefore);
            long connectionsAfter = serverConnections();
            System.out.printf(
                    "PostgresFaultTest 20 cycles: worst restart %d ms, worst recovery after it %d ms;"
                            + " threads %d -> %d, server connections %d -> %d; %s%n",
                    worstRestart,
                    worstRecovery,
                    threadsBefore,
                    threadsAfter,
                    connectionsBefore,
                    connectionsAfter,
                    load.summary());
            assertThat(threadsAfter)
                    .as("the limiter's, pool's and driver's threads after 20 kill/restart cycles")
                    .isLessThanOrEqualTo(threadsBefore);
            assertThat(connectionsAfter)
                    .as("server connections after 20 kill/restart cycles")
                    .isEqualTo(connectionsBefore)
                    .isEqualTo(POOL_SIZE);
            assertThat(ds.getHikariPoolMXBean().getTotalConnections()).isEqualTo(POOL_SIZE);
            assertNoCallThrew(load);
        }
        assertThat(awaitThreadCount(threadsBeforePool))
                .as("the limiter's, pool's and driver's threads once closed")
                .isLessThanOrEqualTo(threadsBeforePool);
    }

    @Test
    void anExhaustedPoolFailsFastAsOverloaded() throws Exception {
        try (HikariDataSource ds = pool(POOL_SIZE, null);
                FailSafeRateLimiter limiter = failSafe(store(ds), FailurePolicy.FAIL_CLOSED)) {
            String key = "exhausted-" + UUID.randomUUID();
            Limit limit = Limit.tokenBucket(5, Rate.perHour(1));
            awaitPoolFull(ds);
            try (Load warm = new Load(limiter)) {
                awaitStoreDeciding(warm, 100);
            }
            assertThat(limiter.tryAcquire(key, limit).degraded()).isFalse();
            awaitPoolFull(ds); // all idle: the test can take every one
            long overloadedBefore = limiter.degradedCount(Degradation.OVERLOADED); // a cold start may have some
            List<Connection> held = new ArrayList<>();
            try {
                for (int i = 0; i < POOL_SIZE; i++) {
                    held.add(ds.getConnection());
                }
                for (int i = 0; i < 5; i++) {
                    Decision d = limiter.tryAcquire(key, limit);
                    assertThat(d.degradation()).isEqualTo(Degradation.OVERLOADED);
                    assertThat(d.allowed()).as("fail-closed").isFalse();
                }
                assertThat(limiter.storeHealthy())
                        .as("an exhausted pool says nothing about the database")
                        .isTrue();
            } finally {
                for (Connection c : held) {
                    c.close();
                }
            }
            assertThat(limiter.degradedCount(Degradation.OVERLOADED) - overloadedBefore)
                    .isEqualTo(5);
            Decision after = limiter.tryAcquire(key, limit);
            assertThat(after.degraded()).isFalse();
            assertThat(after.remaining())
                    .as("the overloaded calls took nothing")
                    .isEqualTo(3);
        }
    }

    @Test
    void theServersStatementTimeoutFiringAppliesThePolicy() throws Exception {
        String key = "statement-timeout-" + UUID.randomUUID();
        Limit limit = Limit.tokenBucket(5, Rate.perHour(1));
        try (HikariDataSource ds = pool(2, "set statement_timeout = 100");
                PostgresRateLimiter store = PostgresRateLimiter.builder(ds)
                        .threads(2)
                        .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(2)))
                        .build();
                Connection holder = java.sql.DriverManager.getConnection(pg.jdbcUrl(), "postgres", "")) {
            FailSafeRateLimiter limiter = failSafe(store, FailurePolicy.FAIL_OPEN);
            Eventually.await(
                    Duration.ofSeconds(20),
                    "the pool connects",
                    () -> ds.getHikariPoolMXBean().getIdleConnections() >= 2);
            Decision first = limiter.tryAcquire(key, limit);
            assertThat(first.degraded()).as("the store decides: %s", first).isFalse();
            assertThat(first.remaining()).isEqualTo(4);
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement(
                    "select 1 from sluice_bucket where key_hash = sluice_key_hash(?) for update")) {
                ps.setString(1, key);
                ps.executeQuery().close();
            }
            assertThatThrownBy(() -> store.tryAcquire(key, limit))
                    .isInstanceOf(PostgresStoreException.class)
                    .satisfies(e -> {
                        assertThat(((PostgresStoreException) e).sqlState()).isEqualTo("57014");
                        assertThat(((PostgresStoreException) e).degradation()).isEqualTo(Degradation.TIMEOUT);
                    });
            Decision d = limiter.tryAcquire(key, limit);
            assertThat(d.degradation()).isEqualTo(Degradation.TIMEOUT);
            assertThat(d.allowed()).as("fail-open").isTrue();
            holder.rollback();
            assertThat(limiter.tryAcquire(key, limit).remaining())
                    .as("the cancelled calls took nothing")
                    .isEqualTo(3);
        }
    }

    // ------------------------------------------------------------------ counting

    /**
     * The pools' connections as the server sees them (by application_name, so that neither this query's
     * own connection nor the short-lived connections the driver opens to send a cancel are counted).
     */
    static long serverConnections() throws SQLException {
        try (Connection c = java.sql.DriverManager.getConnection(pg.jdbcUrl(), "postgres", "");
                PreparedStatement ps = c.prepareStatement("select count(*) from pg_stat_activity"
                        + " where backend_type = 'client backend' and application_name = ?")) {
            ps.setString(1, APPLICATION);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Waits (at most 20 s) until HikariCP has filled the pool and the server sees exactly those connections. */
    static void awaitPoolFull(HikariDataSource ds) throws Exception {
        int size = ds.getMaximumPoolSize();
        Eventually.await(
                Duration.ofSeconds(20),
                "the pool of " + size + " filled, each connection seen by the server",
                () -> ds.getHikariPoolMXBean().getIdleConnections() == size && serverConnections() == size);
    }

    /**
     * Live threads of the limiter (its workers and cleaners), of the test's pools and of the driver; not the JVM's
     * own, which start and end on their own schedule, nor the one deadline timer every limiter of the JVM shares.
     */
    static int ownThreadCount() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName();
            if (t.isAlive()
                    && !name.equals("sluice-deadlines")
                    && (name.startsWith("sluice-")
                            || name.startsWith("fault-")
                            || name.startsWith("PostgreSQL-JDBC"))) {
                n++;
            }
        }
        return n;
    }

    /**
     * {@link #ownThreadCount()} once it has settled to {@code expected} or 30 s have passed: threads that finish
     * their work (HikariCP's connection adders, the driver's timer) take a moment to exit.
     */
    static int awaitThreadCount(int expected) throws InterruptedException {
        try {
            Eventually.await(
                    Duration.ofSeconds(30), "threads settled to " + expected, () -> ownThreadCount() <= expected);
        } catch (AssertionError stillMore) {
            // the caller's assertion on the count says what is left; the threads are printed below
        }
        int n = ownThreadCount();
        if (n != expected) {
            Thread.getAllStackTraces().keySet().forEach(t -> System.out.println("  thread: " + t.getName()));
        }
        return n;
    }
}
