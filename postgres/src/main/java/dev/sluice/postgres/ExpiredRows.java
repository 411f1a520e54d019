package dev.sluice.postgres;

import dev.sluice.store.StoreClock;
import java.sql.PreparedStatement;
import java.sql.Types;
import java.time.Duration;
import java.util.List;

/**
 * The delete an {@link ExpiryCleaner} sweeps with: up to a batch of one table's expired rows per statement, by the
 * limiter's clock (the database's, or its ticker's), on the caller's thread under the maintenance budget. The tables,
 * in sweep order: the three state tables ({@link Table}), then the pending reservations (007_settle.sql), then the
 * slots in flight (008_in_flight.sql).
 */
final class ExpiredRows {
    /**
     * The budget of a sweep's deletes: they run on the cleaner's own thread and no caller waits for them, so the
     * decision budget would only cancel useful work; this still bounds a sweep stuck on a dead database.
     */
    static final Duration MAINTENANCE_BUDGET = Duration.ofSeconds(30);

    private final AttemptLoop attempts;
    private final StoreClock clock;
    /** Each table's delete, in sweep order. */
    final List<String> tables;

    ExpiredRows(AttemptLoop attempts, Sql sql, StoreClock clock) {
        this.attempts = attempts;
        this.clock = clock;
        this.tables = List.of(
                Table.BUCKET.clean(sql),
                Table.WINDOW.clean(sql),
                Table.LOG.clean(sql),
                sql.pendingClean,
                sql.inFlightClean);
    }

    /** Deletes up to {@code batchSize} expired rows of one table (its statement in {@link #tables}). */
    int delete(String clean, int batchSize) {
        DecisionCall call = DecisionCall.maintenance(System.nanoTime() + MAINTENANCE_BUDGET.toNanos());
        return attempts.run(null, null, call, MAINTENANCE_BUDGET.toNanos(), c -> {
            try (PreparedStatement ps = c.prepare(clean)) {
                StoreClock.Reading reading = clock.read();
                if (reading.store()) {
                    ps.setNull(1, Types.BIGINT); // the wire form of "the database's clock"
                } else {
                    ps.setLong(1, Math.floorDiv(reading.clientNanos(), 1000L) * 1000L);
                }
                ps.setInt(2, batchSize);
                return ps.executeUpdate();
            }
        });
    }
}
