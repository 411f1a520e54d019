package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.tck.Eventually;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A misconfiguration is not an outage: a database that refuses the password, has no such database, denies a
 * privilege or SSL as the URL asks for it, a host that does not resolve, another server at the port, fail
 * {@code create()} at once as {@link Degradation#MISCONFIGURED} with one message that names the URL (never its
 * password), what was refused and the fix, after one login, not a retry storm; a port that never answers stays an
 * outage. After a good start, a rotated password degrades decisions as MISCONFIGURED and the pool's logins back off.
 *
 * <p>A PostgreSQL of its own, whose pg_hba.conf asks every role but {@code postgres} for a password.
 */
class MisconfiguredPostgresTest {

    private static final String RIGHT = "the-right-one";
    private static final String WRONG = "not-the-right-one";
    private static final Limit LIMIT = Limit.tokenBucket(10, Rate.perSecond(1));

    private static EmbeddedPostgres pg;
    private static Path dir;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("sluice-pg-hba");
        Path hba = dir.resolve("pg_hba.conf");
        Files.writeString(hba, """
                local all all trust
                host all postgres 127.0.0.1/32 trust
                host all postgres ::1/128 trust
                host all all 127.0.0.1/32 scram-sha-256
                host all all ::1/128 scram-sha-256
                """);
        pg = EmbeddedPostgres.builder()
                .setServerConfig("hba_file", hba.toString())
                .setServerConfig("fsync", "off")
                .start();
        asPostgres(
                "postgres",
                "create role sluice_login login password '" + RIGHT + "'",
                "create database misconf owner sluice_login",
                "create role no_rights login password '" + RIGHT + "'");
        PostgresRateLimiter.create(url(pg.getPort(), "sluice_login", RIGHT)).close(); // migrated, as its owner
    }

    @AfterAll
    static void stop() throws IOException {
        pg.close();
    }

    private static void asPostgres(String database, String... statements) throws SQLException {
        try (Connection c = pg.getDatabase("postgres", database).getConnection();
                Statement st = c.createStatement()) {
            for (String sql : statements) {
                st.execute(sql);
            }
        }
    }

    private static String url(int port, String user, String password) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/misconf?user=" + user + "&password=" + password;
    }

    private static PostgresStoreException refused(String url) {
        Throwable e = catchThrowable(() -> PostgresRateLimiter.create(url));
        assertThat(e).as(url).isInstanceOf(PostgresStoreException.class);
        return (PostgresStoreException) e;
    }

    @Test
    void aWrongPasswordFailsStartupAfterOneLoginWithTheFixAndNotThePassword() throws Exception {
        try (CountingProxy proxy = new CountingProxy(pg.getPort())) {
            String url = url(proxy.port(), "sluice_login", WRONG);
            Throwable e = catchThrowable(() -> FailSafeRateLimiter.builder(() -> PostgresRateLimiter.create(url))
                    .build());
            assertThat(e).isInstanceOf(PostgresStoreException.class);
            assertThat(((PostgresStoreException) e).degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(((PostgresStoreException) e).sqlState()).isEqualTo("28P01");
            assertThat(e)
                    .hasMessageStartingWith(
                            "cannot connect to PostgreSQL at jdbc:postgresql://127.0.0.1:" + proxy.port()
                                    + "/misconf?user=sluice_login&password=***: the database refused the password")
                    .hasMessageContaining("fix the user and password in the URL")
                    .hasMessageNotContaining(WRONG);
            assertThat(proxy.accepted())
                    .as("logins for one failed start: no retry, no pool refilling")
                    .isEqualTo(1);
        }
    }

    @Test
    void aMissingDatabaseOrPrivilegeIsAMisconfiguration() {
        PostgresStoreException noDb = refused(
                "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/no_such_db?user=sluice_login&password=" + RIGHT);
        assertThat(noDb.degradation()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(noDb).hasMessageContaining("has no such database").hasMessageContaining("3D000");
        PostgresStoreException noRights = refused(url(pg.getPort(), "no_rights", RIGHT));
        assertThat(noRights.degradation()).as(noRights.getMessage()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(noRights)
                .hasMessageContaining("refused a privilege Sluice needs")
                .hasMessageContaining("42501");
    }

    @Test
    void sslTheServerDoesNotSpeakAndAHostThatDoesNotResolveAreMisconfigurations() {
        PostgresStoreException ssl = refused(url(pg.getPort(), "sluice_login", RIGHT) + "&sslmode=require");
        assertThat(ssl.degradation()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(ssl).hasMessageContaining("check sslmode");
        PostgresStoreException host = refused("jdbc:postgresql://no-such-host.invalid:5432/misconf?user=sluice_login");
        assertThat(host.degradation()).isEqualTo(Degradation.MISCONFIGURED);
        assertThat(host).hasMessageContaining("host does not resolve");
    }

    @Test
    void anHttpServerAtThePortIsAMisconfigurationAndASilentPortAnOutage() throws Exception {
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/", x -> {
            x.sendResponseHeaders(404, -1);
            x.close();
        });
        // a thread an exchange: a login the driver left hanging holds one
        http.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "http-test");
            t.setDaemon(true);
            return t;
        }));
        http.start();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Throwable wrong = catchThrowable(
                    () -> PostgresRateLimiter.create(quick(http.getAddress().getPort())));
            assertThat(wrong)
                    .isInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("is an HTTP server, not" + " PostgreSQL: check the host and port");
            assertThat(((PostgresStoreException) wrong).degradation()).isEqualTo(Degradation.MISCONFIGURED);
            Throwable outage = catchThrowable(() -> PostgresRateLimiter.create(quick(silent.getLocalPort())));
            assertThat(outage).isInstanceOf(PostgresStoreException.class);
            assertThat(((PostgresStoreException) outage).degradation())
                    .as(outage.getMessage())
                    .isIn(Degradation.UNAVAILABLE, Degradation.TIMEOUT);
        } finally {
            http.stop(0);
        }
    }

    /**
     * Without a failure policy in front, every decision asks the pool for a connection: a bare limiter whose password
     * was rotated, called in a loop by 8 threads, still logs in a handful of times in six seconds, each decision
     * failing MISCONFIGURED at once (the login held back) or within its budget.
     */
    @Test
    void aBareLimiterUnderLoadAfterARotatedPasswordLogsInOnlyAsTheBackoffAllows() throws Exception {
        asPostgres(
                "misconf",
                "create role rotated login password '" + RIGHT + "'",
                "grant all on all tables in schema public to rotated",
                "grant execute on all functions in schema public" + " to rotated");
        try (CountingProxy proxy = new CountingProxy(pg.getPort());
                PostgresRateLimiter limiter = PostgresRateLimiter.builder(url(proxy.port(), "rotated", RIGHT))
                        .threads(4)
                        .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(2)))
                        .build()) {
            assertThat(limiter.tryAcquire("k", LIMIT).allowed()).isTrue();
            asPostgres(
                    "postgres",
                    "alter role rotated password '" + WRONG + "'",
                    "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'rotated'");
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.ConcurrentHashMap<Degradation, Integer> seen =
                    new java.util.concurrent.ConcurrentHashMap<>();
            java.util.List<Thread> callers = new java.util.ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            limiter.tryAcquire("k", LIMIT);
                        } catch (PostgresStoreException e) {
                            seen.merge(e.degradation(), 1, Integer::sum);
                        }
                    }
                });
                t.start();
                callers.add(t);
            }
            // the ended connections fail first
            Eventually.await(
                    Duration.ofSeconds(20),
                    "a call failing as misconfigured",
                    () -> seen.containsKey(Degradation.MISCONFIGURED));
            int before = proxy.accepted();
            Thread.sleep(6000); // the window in which logins are counted: no assertion on time
            int logins = proxy.accepted() - before;
            stop.set(true);
            for (Thread t : callers) {
                t.join(10_000);
            }
            assertThat(seen).containsKey(Degradation.MISCONFIGURED);
            assertThat(logins)
                    .as("logins in 6 s under load while the password is refused")
                    .isLessThanOrEqualTo(4);
        }
    }

    /**
     * The pool's logins go through a {@link LoginGate}: after a refused login it sends none for 1 s, then 2 s, 4 s …
     * 30 s, whatever asks (HikariCP refilling, every decision that finds no idle connection), and a login that works
     * opens it again. Time is a manual clock; logins are counted by the proxy in front of the database.
     */
    @Test
    void theLoginGateHoldsLoginsBackAfterARefusalFromOneSecondToThirty() throws Exception {
        try (CountingProxy proxy = new CountingProxy(pg.getPort())) {
            PGSimpleDataSource driver = new PGSimpleDataSource();
            driver.setUrl(url(proxy.port(), "sluice_login", WRONG));
            long[] now = {0};
            LoginGate gate = new LoginGate(driver, () -> now[0]);
            for (int i = 0; i < 20; i++) {
                Throwable e = catchThrowable(gate::getConnection);
                assertThat(e).isInstanceOf(SQLException.class);
                assertThat(((SQLException) e).getSQLState())
                        .as("the refusal's own SQLSTATE")
                        .isEqualTo("28P01");
            }
            assertThat(proxy.accepted()).as("twenty asks, one login").isEqualTo(1);
            long[] waits = {1, 2, 4, 8, 16, 30, 30};
            for (int i = 0; i < waits.length; i++) {
                now[0] += TimeUnit.SECONDS.toNanos(waits[i]) - 1;
                assertThat(catchThrowable(gate::getConnection))
                        .as("the last refusal again, without a login")
                        .isInstanceOf(SQLException.class);
                assertThat(proxy.accepted())
                        .as("held back until the wait has passed")
                        .isEqualTo(i + 1);
                now[0] += 1;
                assertThat(catchThrowable(gate::getConnection))
                        .as("a login, refused")
                        .isInstanceOf(SQLException.class);
                assertThat(proxy.accepted()).isEqualTo(i + 2);
            }
            driver.setPassword(RIGHT); // the URL's password is overridden by the property
            driver.setUrl(url(proxy.port(), "sluice_login", RIGHT));
            now[0] += TimeUnit.SECONDS.toNanos(30);
            gate.getConnection().close();
            assertThat(gate.refusals()).as("a login that works opens the gate").isZero();
        }
    }

    /** A DataSource whose login gives up after 1 s (the limiter's own pool waits 10 s), for a port that never answers. */
    private static PGSimpleDataSource quick(int port) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl("jdbc:postgresql://127.0.0.1:" + port + "/misconf?user=sluice_login");
        ds.setLoginTimeout(1);
        return ds;
    }

    /**
     * The role's password is changed under a running limiter and its connections ended: decisions are degraded
     * MISCONFIGURED, and over six seconds the database sees a handful of logins (1 s, 2 s, 4 s apart), not the
     * pool's refilling every few milliseconds. Once the password is back, the database decides again.
     */
    @Test
    void aRotatedPasswordDegradesDecisionsAsMisconfiguredAndLoginsBackOff() throws Exception {
        try (CountingProxy proxy = new CountingProxy(pg.getPort());
                FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(
                                () -> PostgresRateLimiter.builder(url(proxy.port(), "sluice_login", RIGHT))
                                        .threads(4)
                                        .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(2)))
                                        .build())
                        .policy(FailurePolicy.FAIL_CLOSED)
                        .build()) {
            assertThat(limiter.tryAcquire("k", LIMIT).degraded()).isFalse();
            asPostgres(
                    "postgres",
                    "alter role sluice_login password '" + WRONG + "'",
                    "select pg_terminate_backend(pid) from pg_stat_activity where usename = 'sluice_login'");
            // the ended connections fail first (unavailable), then the pool's logins
            Eventually.await(
                    Duration.ofSeconds(20),
                    "a decision degraded as misconfigured",
                    () -> limiter.tryAcquire("k", LIMIT).degradation() == Degradation.MISCONFIGURED);
            int before = proxy.accepted();
            Thread.sleep(6000); // the window in which logins are counted: no assertion on time
            assertThat(proxy.accepted() - before)
                    .as("logins in 6 s while the password is refused")
                    .isLessThanOrEqualTo(4);

            asPostgres("postgres", "alter role sluice_login password '" + RIGHT + "'");
            // the next login comes at most 30 s after the last (ReconnectBackoff.MAX)
            Eventually.await(
                    Duration.ofSeconds(60),
                    "the database deciding again once the password is back",
                    () -> !limiter.tryAcquire("k", LIMIT).degraded());
        }
    }
}
