package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * What {@code peek} does to the tables: nothing. No row is inserted for a key never seen, and an existing
 * row is neither updated nor locked (its xmin, xmax and ctid stay as they were); one statement a peek.
 */
class PeekTest {

    private static final List<Limit> LIMITS = List.of(
            Limit.tokenBucket(3, Rate.perSecond(1)),
            Limit.gcra(Rate.perSecond(1), 3),
            Limit.fixedWindow(3, Duration.ofSeconds(10)),
            Limit.slidingWindow(3, Duration.ofSeconds(10)),
            Limit.slidingLog(3, Duration.ofSeconds(10)));

    /** Every row of {@code key} in the three tables, with the system columns any write or row lock changes. */
    private static List<String> rows(String key) {
        List<String> out = new ArrayList<>();
        try (Connection c = TestDatabase.dataSource().getConnection()) {
            for (String table : List.of("sluice_bucket", "sluice_window", "sluice_log")) {
                try (PreparedStatement ps =
                        c.prepareStatement("select t::text, xmin::text, xmax::text, ctid::text from " + table
                                + " t where key_hash = sluice_key_hash(?) order by limit_id")) {
                    ps.setString(1, key);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            out.add(table + " " + rs.getString(1) + " xmin=" + rs.getString(2) + " xmax="
                                    + rs.getString(3) + " ctid=" + rs.getString(4));
                        }
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    @Test
    @SuppressWarnings("try") // closes the limiter early on purpose, to see a closed limiter refuse a peek
    void peekInsertsNoRowChangesNoRowAndIsOneStatement() {
        RoundTripTest.CountingDataSource ds = new RoundTripTest.CountingDataSource(TestDatabase.dataSource());
        String fresh = "peek:" + UUID.randomUUID();
        String used = "peek:" + UUID.randomUUID();
        // a pinned clock: on the database's own clock a 10 s window could roll over between acquire and peek
        try (PostgresRateLimiter rl = TestDatabase.builder(ds)
                .ticker(ManualTicker.atEpochNanos(1_767_225_600L * 1_000_000_000L))
                .build()) {
            ds.calls.set(0); // build() made its warm-up round trips
            int peeks = 0;
            for (Limit l : LIMITS) {
                for (long cost = 1; cost <= 3; cost++) {
                    Decision d = rl.peek(fresh, l, cost);
                    peeks++;
                    assertThat(d.allowed())
                            .as("%s: a key never seen is full", l)
                            .isTrue();
                    assertThat(d.remaining()).as("%s", l).isEqualTo(3);
                }
            }
            assertThat(ds.calls.get()).as("one statement per peek").isEqualTo(peeks);
            assertThat(rows(fresh)).as("no row inserted for a key never seen").isEmpty();

            for (Limit l : LIMITS) {
                assertThat(rl.tryAcquire(used, l, 2).allowed()).isTrue();
            }
            List<String> before = rows(used);
            assertThat(before).hasSize(5);
            ds.calls.set(0);
            peeks = 0;
            for (int round = 0; round < 3; round++) {
                for (Limit l : LIMITS) {
                    assertThat(rl.peek(used, l).allowed()).as("%s", l).isTrue();
                    assertThat(rl.peek(used, l, 2).allowed()).as("%s", l).isFalse();
                    peeks += 2;
                }
            }
            assertThat(ds.calls.get()).as("one statement per peek").isEqualTo(peeks);
            assertThat(rows(used)).as("rows neither written nor locked").isEqualTo(before);
            for (Limit l : LIMITS) {
                assertThat(rl.tryAcquire(used, l).remaining())
                        .as("%s: nothing taken by peeking", l)
                        .isZero();
            }
            ds.calls.set(0);
            assertThatThrownBy(() -> rl.peek("a\0b", LIMITS.get(0)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("NUL");
            assertThat(ds.calls.get()).as("bad input sends nothing").isZero();
            rl.close();
            assertThatThrownBy(() -> rl.peek(used, LIMITS.get(0)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage(PostgresRateLimiter.CLOSED);
        }
    }

    /** A client clock behind the row's (another instance's) decides at the row's stored instant, as tryAcquire does. */
    @Test
    void peekNeverDecidesBeforeTheRowsInstant() {
        long t0 = 1_767_225_600L * 1_000_000_000L;
        Limit l = Limit.fixedWindow(3, Duration.ofSeconds(1));
        String k = "peek:" + UUID.randomUUID();
        try (PostgresRateLimiter ahead = TestDatabase.builder(TestDatabase.dataSource())
                        .ticker(ManualTicker.atEpochNanos(t0 + 1_500_000_000L))
                        .build();
                PostgresRateLimiter behind = TestDatabase.builder(TestDatabase.dataSource())
                        .ticker(ManualTicker.atEpochNanos(t0 + 500_000_000L))
                        .build()) {
            assertThat(ahead.tryAcquire(k, l, 2).remaining()).isEqualTo(1);
            // the window before the row's: decided in the row's window, at its start
            assertThat(behind.peek(k, l, 2)).isEqualTo(new Decision(false, 3, 1, 1_000_000_000L, 1_000_000_000L));
            assertThat(behind.peek(k, l, 1)).isEqualTo(new Decision(true, 3, 1, 0, 1_000_000_000L));
            assertThat(behind.peek(k, l, 2)).isEqualTo(behind.tryAcquire(k, l, 2));
        }
    }
}
