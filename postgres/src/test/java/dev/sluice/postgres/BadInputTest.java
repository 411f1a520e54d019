package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** What goes wrong outside the algorithms: missing tables, a database that is down, awkward keys. */
class BadInputTest {
    private static final Limit LIMIT = Limit.tokenBucket(2, Rate.perMinute(1));

    @Test
    void aMissingSchemaWithoutMigrationSaysToRunMigrateAtBuild() {
        assertThatThrownBy(() -> TestDatabase.builder(TestDatabase.dataSource())
                        .schema("never_migrated")
                        .migrateIfMissing(false)
                        .build())
                .isInstanceOf(PostgresStoreException.class)
                .hasMessageContaining("cannot use PostgreSQL at jdbc:postgresql://")
                .hasMessageContaining("missing in schema never_migrated")
                .hasMessageContaining("run PostgresRateLimiter.migrate()")
                .hasMessageContaining("psql -f");
    }

    @Test
    void aMissingSchemaIsMigratedByDefaultSoTheFirstCallSucceeds() {
        String schema = "auto_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (PostgresRateLimiter rl = PostgresRateLimiter.builder(TestDatabase.dataSource())
                .schema(schema)
                .build()) {
            assertThat(rl.tryAcquire("k", LIMIT).remaining()).isEqualTo(1);
            assertThat(rl.tryAcquire(List.of(Permit.of("a", LIMIT), Permit.of("b", LIMIT)))
                            .allowed())
                    .isTrue();
        }
    }

    @Test
    void aDatabaseThatIsDownFailsCreateWithAClearException() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort(); // free once closed: nothing listens there
        }
        PGSimpleDataSource down = new PGSimpleDataSource();
        down.setServerNames(new String[] {"127.0.0.1"});
        down.setPortNumbers(new int[] {closedPort});
        down.setDatabaseName("postgres");
        down.setUser("postgres");
        down.setConnectTimeout(2);
        assertTimeoutPreemptively(
                Duration.ofSeconds(30),
                () -> assertThatThrownBy(() -> PostgresRateLimiter.create(down))
                        .isInstanceOf(PostgresStoreException.class)
                        .hasMessageContaining(
                                "cannot connect to PostgreSQL at jdbc:postgresql://127.0.0.1:" + closedPort)
                        .hasMessageContaining("check that the database is up")
                        .satisfies(e -> assertThat(((PostgresStoreException) e).degradation())
                                .isEqualTo(Degradation.UNAVAILABLE)));
    }

    /** A decision stuck behind a row lock past its budget is cancelled by the server: an error, nothing taken. */
    @Test
    void aDecisionBlockedPastItsBudgetIsCancelledAndTakesNothing() throws Exception {
        String key = "blocked:" + UUID.randomUUID();
        Limit limit = Limit.tokenBucket(5, Rate.perHour(1));
        WatchedConnections connections = new WatchedConnections();
        try (PostgresRateLimiter rl = TestDatabase.builder(connections)
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(1)))
                .build()) {
            assertThat(rl.tryAcquire(key, limit).remaining()).isEqualTo(4);
            try (java.sql.Connection holder = TestDatabase.dataSource().getConnection()) {
                holder.setAutoCommit(false);
                try (java.sql.PreparedStatement ps = holder.prepareStatement(
                        "select 1 from sluice_bucket where key_hash = sluice_key_hash(?) for update")) {
                    ps.setString(1, key);
                    ps.executeQuery().close();
                }
                assertTimeoutPreemptively(
                        Duration.ofSeconds(30),
                        () -> assertThatThrownBy(() -> rl.tryAcquire(key, limit))
                                .isInstanceOf(PostgresStoreException.class)
                                // the caller's deadline and the server's cancellation race at the budget:
                                // either message names the budget, and both say nothing was taken
                                .hasMessageContaining("1000 ms")
                                .hasMessageContaining("nothing was taken")
                                .satisfies(e -> assertThat(((PostgresStoreException) e).degradation())
                                        .isEqualTo(Degradation.TIMEOUT)));
                // the lock is held until the statement is over: on a busy machine it may reach the database only
                // after its caller gave up, and wait there until a cancel finds it
                connections.awaitAllReturned();
                TestDatabase.awaitNoLockWaiters();
                holder.rollback();
            }
            assertThat(rl.tryAcquire(key, limit).remaining())
                    .as("the cancelled call took nothing")
                    .isEqualTo(3);
        }
    }

    @Test
    void keysPostgresTextCannotHoldAreRejectedBeforeAnythingIsSent() {
        try (PostgresRateLimiter rl = TestDatabase.limiter(TestDatabase.dataSource())) {
            assertThatThrownBy(() -> rl.tryAcquire("user\0admin", LIMIT))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL character (U+0000) at index 4")
                    .hasMessageContaining("PostgreSQL text cannot store it");
            assertThatThrownBy(() -> rl.tryAcquire("half \uD83D pair", LIMIT))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unpaired UTF-16 surrogate (U+D83D) at index 5");
            assertThatThrownBy(() -> rl.tryAcquire(List.of(Permit.of("ok", LIMIT), Permit.of("\0", LIMIT))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL");
            assertThatThrownBy(() -> rl.reset("\0", LIMIT)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void awkwardKeysAreStoredExactlyAndLimitedApart() {
        String base = "awk:" + UUID.randomUUID() + ":";
        String[] keys = {
            base + "it's \"quoted\"; drop table sluice_bucket; --",
            base + "émoji 🚦🚦",
            base + "x".repeat(4096 - base.length()),
            base + "🚦".repeat((4096 - base.length()) / 2),
            base + "\\back\\slash %_",
            base + "tab\tnewline\n"
        };
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600L * 1_000_000_000L);
        try (PostgresRateLimiter rl =
                TestDatabase.builder(TestDatabase.dataSource()).ticker(t).build()) {
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, LIMIT, 2)).isEqualTo(new Decision(true, 2, 0, 0, 120_000_000_000L));
            }
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, LIMIT).allowed())
                        .as("second use of %s", k.substring(0, 50))
                        .isFalse();
                Long chars = TestDatabase.queryLong(
                        "select length(key) from sluice_bucket where key_hash = sluice_key_hash(?) and key = ?", k, k);
                assertThat(chars).as("stored as given").isEqualTo(k.codePointCount(0, k.length()));
            }
        }
    }

    @Test
    void badNamesAreRejectedByTheBuilder() {
        var b = TestDatabase.builder(TestDatabase.dataSource());
        assertThatThrownBy(() -> b.schema("x\"; drop"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("schema 'x\"; drop'")
                .hasMessageContaining("a-z, 0-9 and _");
        assertThatThrownBy(() -> b.tablePrefix("Bad-"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("table prefix 'Bad-'");
        assertThatThrownBy(() -> PostgresRateLimiter.builder((javax.sql.DataSource) null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("dataSource");
        assertThatThrownBy(() -> PostgresRateLimiter.builder((String) null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("jdbcUrl");
        assertThatThrownBy(() -> PostgresRateLimiter.create("postgresql://user:secret@host/db"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("jdbc:postgresql://host:5432")
                .hasMessageNotContaining("secret");
    }

    @Test
    void aClosedLimiterSaysSo() {
        PostgresRateLimiter rl = TestDatabase.limiter(TestDatabase.dataSource());
        rl.close();
        rl.close();
        assertThatThrownBy(() -> rl.tryAcquire("k", LIMIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }
}
