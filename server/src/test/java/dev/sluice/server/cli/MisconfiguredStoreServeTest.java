package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.redis.RedisServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice serve} on a misconfigured store refuses to start: exit code 2 and one line on stderr
 * ({@code event=start_refused}) that names the store (never its password), what it refused and the fix, and the flag
 * that starts it anyway. A store that is down
 * or never answers is not a misconfiguration: the service starts and its policy answers. Run through the command's
 * entry point, as a shell would.
 */
class MisconfiguredStoreServeTest {

    private static final String PASSWORD = "the-right-one";
    private static EmbeddedPostgres pg;

    @BeforeAll
    static void startPostgres() throws Exception {
        Path hba = Files.createTempDirectory("sluice-serve-hba").resolve("pg_hba.conf");
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
        try (Connection c = pg.getPostgresDatabase().getConnection();
                Statement st = c.createStatement()) {
            st.execute("create role sluice login password '" + PASSWORD + "'");
        }
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        pg.close();
    }

    /** Runs {@code serve} with {@code args} and returns its exit code and stderr. */
    private static Run serve(String... args) {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        int code;
        try {
            String[] all = new String[args.length + 5];
            all[0] = "serve";
            System.arraycopy(args, 0, all, 1, args.length);
            System.arraycopy(new String[] {"--http", "127.0.0.1:0", "--grpc", "off"}, 0, all, args.length + 1, 4);
            code = SluiceCommand.commandLine().execute(all);
        } finally {
            System.setErr(err);
        }
        return new Run(code, captured.toString(StandardCharsets.UTF_8));
    }

    record Run(int code, String stderr) {}

    @Test
    void aWrongPostgresPasswordStopsTheStartWithTheMessageAndTheFlag() {
        Run r = serve("--store", "postgresql://sluice:not-" + PASSWORD + "@127.0.0.1:" + pg.getPort() + "/postgres");
        assertThat(r.code()).as(r.stderr()).isEqualTo(2);
        assertThat(r.stderr())
                .contains("event=start_refused")
                .contains("cannot connect to PostgreSQL at jdbc:postgresql://"
                        + "127.0.0.1:" + pg.getPort() + "/postgres?user=sluice&password=***: the database refused the"
                        + " password")
                .contains("SQLSTATE 28P01")
                .contains("--start-despite-misconfigured-store")
                .doesNotContain(PASSWORD);
    }

    @Test
    void anUnknownRedisHostStopsTheStart() {
        Run r = serve("--store", "redis://no-such-host.invalid:6379");
        assertThat(r.code()).as(r.stderr()).isEqualTo(2);
        assertThat(r.stderr())
                .contains("event=start_refused")
                .contains("Redis at redis://no-such-host.invalid:6379 names a" + " host that does not resolve");
    }

    @Test
    void aRedisUrlAtPostgresqlsPortStopsTheStart() {
        Run r = serve("--store", "redis://127.0.0.1:" + pg.getPort());
        assertThat(r.code()).as(r.stderr()).isEqualTo(2);
        assertThat(r.stderr())
                .contains("event=start_refused")
                .contains("redis://127.0.0.1:" + pg.getPort()
                        + " is a PostgreSQL server, not Redis: check the host and port in the URI");
    }

    @Test
    void aPostgresqlUrlAtRedissPortStopsTheStart() {
        try (RedisServer redis = RedisServer.start()) {
            Run r = serve("--store", "postgresql://sluice@127.0.0.1:" + redis.port() + "/postgres");
            assertThat(r.code()).as(r.stderr()).isEqualTo(2);
            assertThat(r.stderr()).contains("is a Redis server (plain text, redis://), not PostgreSQL");
        }
    }

    @Test
    void theFlagStartsItAnywayDegradedMisconfiguredAndTheHelpSaysSo() {
        String uri = "postgresql://sluice:not-" + PASSWORD + "@127.0.0.1:" + pg.getPort() + "/postgres";
        Throwable refused =
                catchThrowable(() -> Stores.open(uri, 1, Stores.Budget.STORE_DEFAULT, 2, FailurePolicy.FAIL_CLOSED));
        assertThat(refused).isInstanceOf(StoreException.class);
        assertThat(((StoreException) refused).degradation()).isEqualTo(Degradation.MISCONFIGURED);
        try (Stores.Opened store =
                Stores.open(uri, 1, Stores.Budget.STORE_DEFAULT, 2, FailurePolicy.FAIL_CLOSED, true)) {
            Decision d = store.limiter().tryAcquire("k", Limit.tokenBucket(1, Rate.perSecond(1)));
            assertThat(d.degradation()).isEqualTo(Degradation.MISCONFIGURED);
            assertThat(d.allowed()).as("fail closed").isFalse();
        }
        ByteArrayOutputStream help = new ByteArrayOutputStream();
        SluiceCommand.commandLine()
                .getSubcommands()
                .get("serve")
                .usage(new PrintStream(help, true, StandardCharsets.UTF_8));
        assertThat(help.toString(StandardCharsets.UTF_8)).contains("--start-despite-misconfigured-store");
    }

    @Test
    void aPortThatNeverAnswersIsAnOutageTheServiceStartsDegraded() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                Stores.Opened store = Stores.open(
                        "redis://127.0.0.1:" + silent.getLocalPort(),
                        1,
                        Stores.Budget.of(Duration.ofMillis(500)),
                        1,
                        FailurePolicy.FAIL_OPEN)) {
            Decision d = store.limiter().tryAcquire("k", Limit.tokenBucket(1, Rate.perSecond(1)));
            assertThat(d.degradation()).isIn(Degradation.UNAVAILABLE, Degradation.TIMEOUT);
            assertThat(d.allowed()).as("fail open").isTrue();
        }
    }
}
