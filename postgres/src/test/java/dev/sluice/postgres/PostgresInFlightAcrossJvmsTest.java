package dev.sluice.postgres;

import dev.sluice.tck.InFlightAcrossJvms;
import org.junit.jupiter.api.Test;

/**
 * Issue 30's acceptance on PostgreSQL: three JVMs on one real database, on its clock, one SIGKILLed while holding
 * slots (see {@link InFlightAcrossJvms}).
 */
class PostgresInFlightAcrossJvmsTest {

    @Test
    void threeJvmsHoldAtMostTheMaximumAndAKilledHoldersSlotsComeBackWhenItsLeaseEnds() throws Exception {
        TestDatabase.dataSource(); // the database and its schema, before the children connect
        InFlightAcrossJvms.run(
                PostgresChildLimiter.class,
                TestDatabase.jdbcUrl(),
                () -> TestDatabase.queryLong("select public.sluice_now_ns() / 1000"));
    }
}
