package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class MigrationsTest {

    @Test
    void migrateIsIdempotentAndHonoursSchemaAndPrefix() {
        String schema = "mig_" + UUID.randomUUID().toString().substring(0, 8);
        try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                .schema(schema)
                .tablePrefix("app_rl_")
                .build()) {
            rl.migrate();
            rl.migrate();
            Limit l = Limit.fixedWindow(2, Duration.ofHours(1));
            assertThat(rl.tryAcquire("k", l).remaining()).isEqualTo(1);
            assertThat(rl.tryAcquire("k", l).remaining()).isZero();
            assertThat(rl.tryAcquire("k", l).allowed()).isFalse();
            assertThat(TestDatabase.queryLong("select current_count from " + schema + ".app_rl_window"))
                    .isEqualTo(2);
            assertThat(TestDatabase.queryLong(
                            "select count(*) from pg_proc p join pg_namespace n on n.oid = p.pronamespace"
                                    + " where n.nspname = ? and p.proname like 'app\\_rl\\_%'",
                            schema))
                    // 15 that decide (sluice_window_acquire and _fits decide both counters), 10 that settle (007),
                    // 1 for work in flight (008), 1 for its batches (009)
                    .isEqualTo(27);
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    @Test
    void migratingTablesOfTheReleaseBeforeNamedLimitsKeepsTheirRows() {
        String schema = "mig_" + UUID.randomUUID().toString().substring(0, 8);
        List<Limit> limits = List.of(
                Limit.tokenBucket(3, Rate.perHour(1)),
                Limit.gcra(Rate.perHour(1), 3),
                Limit.fixedWindow(3, Duration.ofHours(1)),
                Limit.slidingWindow(3, Duration.ofHours(1)),
                Limit.slidingLog(3, Duration.ofHours(1)));
        try (PostgresRateLimiter rl =
                TestDatabase.builder(TestDatabase.dataSource()).schema(schema).build()) {
            rl.migrate();
            for (Limit l : limits) {
                for (int i = 0; i < 3; i++) {
                    assertThat(rl.tryAcquire("k", l).allowed()).as("%s", l).isTrue();
                }
            }
            // the tables as the release before named limits made them: no numbers column
            for (String table : List.of("sluice_bucket", "sluice_window", "sluice_log")) {
                TestDatabase.execute("alter table " + schema + "." + table + " drop column numbers");
            }
            rl.migrate();
            assertThat(TestDatabase.queryLong(
                            "select count(*) from " + schema + ".sluice_bucket where numbers is null"))
                    .isEqualTo(2);
            for (Limit l : limits) {
                assertThat(rl.tryAcquire("k", l).allowed())
                        .as("%s: what was spent before the migration", l)
                        .isFalse();
                assertThat(rl.tryAcquire("k", l.named("n")).allowed())
                        .as("%s named: a state of its own", l)
                        .isTrue();
            }
        } finally {
            TestDatabase.execute("drop schema if exists " + schema + " cascade"); // a failed migrate leaves none
        }
    }

    @Test
    void migrateReportsWhatItCreatedThenThatNothingWasNeeded() {
        String schema = "rep_" + UUID.randomUUID().toString().substring(0, 8);
        try {
            MigrationReport first = Migrations.apply(TestDatabase.dataSource(), schema, "app_rl_");
            assertThat(first.created())
                    .contains(
                            "schema " + schema,
                            "table app_rl_bucket",
                            "table app_rl_window",
                            "table app_rl_log",
                            "table app_rl_pending",
                            "table app_rl_in_flight");
            assertThat(first.created())
                    .filteredOn(o -> o.startsWith("function app_rl_"))
                    .hasSize(27);
            assertThat(first.updated()).isEmpty();
            assertThat(first.describe())
                    .isEqualTo("created schema " + schema + ", 5 tables (app_rl_bucket, app_rl_in_flight, app_rl_log,"
                            + " app_rl_pending, app_rl_window), " + count(first, "index") + " indexes and 27 functions"
                            + " in schema " + schema);

            MigrationReport second = Migrations.apply(TestDatabase.dataSource(), schema, "app_rl_");
            assertThat(second.nothingToDo()).isTrue();
            assertThat(second.describe())
                    .isEqualTo("nothing to do: the Sluice schema in " + schema + " was already up to date");

            // one function missing, another of a different definition (as left by another version): said so
            List<String> functions = first.created().stream()
                    .filter(o -> o.startsWith("function "))
                    .toList();
            String dropped = functions.get(0).substring("function ".length());
            String altered = functions.get(1).substring("function ".length());
            TestDatabase.execute("drop function " + schema + "." + dropped);
            TestDatabase.execute("alter function " + schema + "." + altered + " cost 999");
            MigrationReport third = Migrations.apply(TestDatabase.dataSource(), schema, "app_rl_");
            assertThat(third.created()).containsExactly("function " + dropped);
            assertThat(third.updated()).containsExactly("function " + altered);
            assertThat(third.describe()).isEqualTo("created 1 function; updated 1 function in schema " + schema);
        } finally {
            TestDatabase.execute("drop schema if exists " + schema + " cascade");
        }
    }

    private static long count(MigrationReport r, String kind) {
        return r.created().stream().filter(o -> o.startsWith(kind + " ")).count();
    }

    /**
     * A least-privilege role: it owns its schema but may not create schemas in the database (no CREATE on
     * it). CREATE SCHEMA IF NOT EXISTS would be refused even though the schema exists.
     */
    @Test
    void migrateWorksForARoleWithoutCreateOnTheDatabase() {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String role = "lp_" + suffix;
        String schema = "lp_schema_" + suffix;
        TestDatabase.execute("create role " + role + " login");
        TestDatabase.execute("create schema " + schema + " authorization " + role);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://localhost:" + TestDatabase.port() + "/postgres");
        config.setUsername(role);
        config.setMaximumPoolSize(2);
        try (HikariDataSource ds = new HikariDataSource(config);
                PostgresRateLimiter rl = TestDatabase.builder(ds).schema(schema).build()) {
            assertThat(TestDatabase.queryLong(
                            "select count(*) from pg_database where datname = current_database()"
                                    + " and has_database_privilege(?, oid, 'CREATE')",
                            role))
                    .as("the role may not create schemas")
                    .isZero();
            rl.migrate();
            rl.migrate();
            Limit l = Limit.tokenBucket(1, Rate.perHour(1));
            assertThat(rl.tryAcquire("k", l).allowed()).isTrue();
            assertThat(rl.tryAcquire("k", l).allowed()).isFalse();
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
            TestDatabase.execute("drop role " + role);
        }
    }

    @Test
    void renderingReplacesOnlyTheSchemaQualifierAndThePrefix() {
        String sql = Migrations.render("rl", "app_");
        assertThat(sql)
                .doesNotContain("public.")
                .doesNotContain("sluice_bucket")
                .contains("create schema if not exists \"rl\";")
                .contains("where nspname = 'rl'")
                .contains("\"rl\".\"app_bucket\"")
                .contains("create index if not exists \"app_bucket_expires_at\" on \"rl\".\"app_bucket\"")
                .contains("\"rl\".rate_limiting_token_bucket_request(");
        assertThat(Migrations.render("public", "sluice_")).contains("\"public\".\"sluice_bucket\"");
    }

    /** The files as shipped apply with plain psql, twice (idempotent), when a psql client is installed. */
    @Test
    void theShippedFilesApplyWithPsql() throws Exception {
        Assumptions.assumeTrue(new File("/usr/bin/psql").canExecute(), "no psql client on this machine");
        String db = "psql_" + UUID.randomUUID().toString().substring(0, 8);
        TestDatabase.execute("create database " + db);
        Path dir = Files.createTempDirectory("sluice-sql");
        try {
            for (int pass = 0; pass < 2; pass++) {
                for (String f : Migrations.FILES) {
                    Path file = dir.resolve(f);
                    Files.writeString(file, Migrations.raw(f), StandardCharsets.UTF_8);
                    Process p = new ProcessBuilder(
                                    "/usr/bin/psql",
                                    "-X",
                                    "-q",
                                    "-v",
                                    "ON_ERROR_STOP=1",
                                    "-h",
                                    "localhost",
                                    "-p",
                                    String.valueOf(TestDatabase.port()),
                                    "-U",
                                    "postgres",
                                    "-d",
                                    db,
                                    "-f",
                                    file.toString())
                            .redirectErrorStream(true)
                            .start();
                    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    assertThat(p.exitValue()).as("psql -f %s: %s", f, out).isZero();
                }
            }
        } finally {
            for (String f : Migrations.FILES) {
                Files.deleteIfExists(dir.resolve(f));
            }
            Files.deleteIfExists(dir);
            TestDatabase.execute("drop database " + db);
        }
    }

    /**
     * Both window counters are decided by sluice_window_acquire; the per-algorithm functions of earlier versions
     * stay, as wrappers, and decide the same: a client of its own calling them by SQL keeps working.
     */
    @Test
    void thePerAlgorithmWindowFunctionsStillDecide() {
        String k = "wrap:" + UUID.randomUUID();
        long w = 60_000_000_000L;
        long now = 1_767_225_600_000_000_000L + 30_000_000_000L; // half-way through a minute window
        for (int i = 0; i < 3; i++) {
            assertThat(TestDatabase.queryLong(
                            "select count(*) from sluice_fixed_window_acquire(?, 'f', 1, ?, ?, 2)" + " where allowed",
                            k,
                            now,
                            w))
                    .isEqualTo(i < 2 ? 1L : 0L);
        }
        // sliding: 2 in the previous window, weighted by half at e = W/2, leave room for 1 of capacity 2 at once
        TestDatabase.queryLong("select count(*) from sluice_sliding_window_acquire(?, 's', 2, ?, ?, 2)", k, now - w, w);
        assertThat(TestDatabase.queryLong(
                        "select count(*) from sluice_sliding_window_acquire(?, 's', 1, ?, ?, 2)" + " where allowed",
                        k,
                        now,
                        w))
                .isEqualTo(1L);
        assertThat(TestDatabase.queryLong(
                        "select count(*) from sluice_sliding_window_acquire(?, 's', 1, ?, ?, 2)" + " where allowed",
                        k,
                        now,
                        w))
                .isEqualTo(0L);
        assertThat(TestDatabase.queryLong(
                        "select count(*) from sluice_window_acquire(true, ?, 's', 1, ?, ?, 2, null)" + " where allowed",
                        k,
                        now,
                        w))
                .isEqualTo(0L);
    }

    @Test
    void theSqlClockHelpersAreExact() {
        assertThat(TestDatabase.queryLong("select sluice_epoch_ns('2026-01-01 00:00:00.123456+00')"))
                .isEqualTo(1_767_225_600_123_456_000L);
        assertThat(TestDatabase.queryLong("select sluice_epoch_ns(sluice_timestamp(1767225600123456001))"))
                .as("rounded up to the microsecond, never early")
                .isEqualTo(1_767_225_600_123_457_000L);
        assertThat(TestDatabase.queryLong("select sluice_epoch_ns(sluice_timestamp(1767225600123456000))"))
                .isEqualTo(1_767_225_600_123_456_000L);
        long db = TestDatabase.queryLong("select sluice_now_ns()");
        long java = Instant.now().toEpochMilli() * 1_000_000L;
        assertThat(Math.abs(db - java)).as("the same machine's clock").isLessThan(60_000_000_000L);
    }

    /** The default limiter decides on the database's clock. */
    @Test
    void theDatabaseClockDecidesByDefault() {
        try (PostgresRateLimiter rl = TestDatabase.limiter(TestDatabase.dataSource())) {
            String k = "clock:" + UUID.randomUUID();
            Limit l = Limit.tokenBucket(3, Rate.perHour(1));
            for (Limit each : List.of(
                    l,
                    Limit.gcra(Rate.perHour(1), 3),
                    Limit.fixedWindow(3, Duration.ofDays(1)),
                    Limit.slidingWindow(3, Duration.ofDays(1)),
                    Limit.slidingLog(3, Duration.ofDays(1)))) {
                assertThat(rl.tryAcquire(k, each, 3).allowed()).as("%s", each).isTrue();
                Decision d = rl.tryAcquire(k, each);
                assertThat(d.allowed()).as("%s", each).isFalse();
                assertThat(d.retryAfterNanos()).as("%s", each).isPositive();
            }
            assertThat(rl.reserve(k, l, 1, Duration.ofHours(2)).retryAfterNanos())
                    .isPositive();
        }
    }

    /** The query the README gives for reading a token bucket answers what the limiter would. */
    @Test
    void theReadmeQueryReadsTokensNow() {
        try (PostgresRateLimiter rl = TestDatabase.limiter(TestDatabase.dataSource())) {
            String k = "readme:" + UUID.randomUUID();
            Limit l = Limit.tokenBucket(10, Rate.of(3, Duration.ofHours(1)));
            rl.tryAcquire(k, l, 3);
            Long tokens = TestDatabase.queryLong(
                    "select floor(split_part(limit_id, ':', 2)::numeric"
                            + " - greatest(0, backlog - (sluice_now_ns() - at_ns)::numeric * split_part(limit_id, ':', 3)::numeric)"
                            + " / split_part(limit_id, ':', 4)::numeric) from sluice_bucket where key_hash = sluice_key_hash(?)",
                    k);
            assertThat(tokens).isEqualTo(7);
            assertThat(rl.tryAcquire(k, l, 1).remaining()).isEqualTo(6);
        }
    }
}
