package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.InFlightLimiter;
import dev.sluice.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What InFlightTck cannot see on PostgreSQL: the rows, and the expiry cleaner deleting a dead holder's. */
class PostgresInFlightTest {
    /** 2030-01-01T00:00:00Z: later than any row other tests leave. */
    private static final long T = 1_893_456_000L * 1_000_000_000L;

    private static long rows(String schema, String key) {
        return TestDatabase.queryLong("select count(*) from " + schema + ".sluice_in_flight where key = '" + key + "'");
    }

    @Test
    void aKeyIsAHeadRowAndOneRowPerSlotAndTheCleanerDeletesThemWhenTheirLeasesEnd() {
        String schema = "slots_" + UUID.randomUUID().toString().substring(0, 8);
        ManualTicker t = ManualTicker.atEpochNanos(T);
        try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                .schema(schema)
                .ticker(t)
                .build()) {
            rl.migrate();
            InFlightLimiter s = rl.inFlight();
            assertThat(s.tryAcquire("dead", 5, "a", Duration.ofSeconds(10)).allowed())
                    .isTrue();
            assertThat(s.tryAcquire("dead", 5, "b", Duration.ofMillis(10_500)).allowed())
                    .isTrue();
            assertThat(s.tryAcquire("alive", 5, "c", Duration.ofMinutes(5)).allowed())
                    .isTrue();
            assertThat(rows(schema, "dead")).as("the head row and two slots").isEqualTo(3);
            assertThat(s.release("alive", "c")).isTrue();
            assertThat(rows(schema, "alive")).as("no slot left: no row").isZero();
            assertThat(s.release("never", "x")).isFalse();
            assertThat(rows(schema, "never"))
                    .as("a release of nothing leaves nothing")
                    .isZero();
            assertThat(s.tryAcquire("alive", 5, "c", Duration.ofMinutes(5)).allowed())
                    .isTrue();

            ExpiryCleaner cleaner = rl.manualCleaner(1_000, 10);
            t.advance(Duration.ofSeconds(10));
            // a's lease ended (not yet cleaned: its row's expires_at is rounded up to the second, 10 s, now); b's
            // ends at 10.5 s, kept as 11 s, and so does the head's
            assertThat(cleaner.sweep()).isEqualTo(1);
            assertThat(rows(schema, "dead")).isEqualTo(2);
            t.advance(Duration.ofSeconds(1));
            assertThat(cleaner.sweep()).as("b and the head row").isEqualTo(2);
            assertThat(rows(schema, "dead")).isZero();
            assertThat(rows(schema, "alive")).as("a live slot stays").isEqualTo(2);
            assertThat(s.tryAcquire("dead", 1, "d", Duration.ofSeconds(1)).remaining())
                    .isZero();
            assertThat(s.tryAcquire("alive", 1, "d", Duration.ofSeconds(1)).allowed())
                    .isFalse();
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    /**
     * A database migrated by the release before batched slot steps (files 001 to 008) is brought up to date by
     * build(): its slots stay held, and concurrent steps (many a statement) answer exactly.
     */
    @Test
    void aSchemaWithoutBatchedStepsMigratesWhenALimiterIsBuiltAndKeepsItsSlots() throws Exception {
        String schema = "slots_" + UUID.randomUUID().toString().substring(0, 8);
        ManualTicker t = ManualTicker.atEpochNanos(T);
        try {
            for (String file : Migrations.FILES.subList(0, Migrations.FILES.indexOf("009_in_flight_many.sql"))) {
                TestDatabase.execute(Migrations.render(file, schema, Migrations.DEFAULT_PREFIX));
            }
            // a slot held under that release: it must survive the migration
            TestDatabase.execute("select * from " + schema + ".sluice_in_flight_step('a', 'k', 'old', 3, "
                    + Duration.ofMinutes(5).toNanos() + ", " + T + ")");
            try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                    .schema(schema)
                    .ticker(t)
                    .build()) {
                assertThat(rl.schemaCreated()).isTrue();
                InFlightLimiter s = rl.inFlight();
                List<CompletableFuture<dev.sluice.Decision>> acquires = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    acquires.add(s.tryAcquireAsync("k", 3, "h" + i, Duration.ofMinutes(1)));
                }
                long allowed = 0;
                for (CompletableFuture<dev.sluice.Decision> f : acquires) {
                    allowed += f.get(10, TimeUnit.SECONDS).allowed() ? 1 : 0;
                }
                assertThat(allowed).as("'old' holds one of 3").isEqualTo(2);
                assertThat(s.release("k", "old")).isTrue();
                assertThat(rl.migrate().nothingToDo()).isTrue();
            }
        } finally {
            TestDatabase.execute("drop schema if exists " + schema + " cascade");
        }
    }
}
