package dev.sluice.redis;

import dev.sluice.tck.InFlightAcrossJvms;
import org.junit.jupiter.api.Test;

/**
 * Issue 30's acceptance on Redis: three JVMs on one real Redis, on Redis's clock, one SIGKILLed while holding slots
 * (see {@link InFlightAcrossJvms}).
 */
class RedisInFlightAcrossJvmsTest {

    @Test
    void threeJvmsHoldAtMostTheMaximumAndAKilledHoldersSlotsComeBackWhenItsLeaseEnds() throws Exception {
        InFlightAcrossJvms.run(RedisChildLimiter.class, RedisServer.shared().uri(), RedisInFlightAcrossJvmsTest::time);
    }

    /** Redis's {@code TIME} in epoch microseconds: the clock the slots' leases end by. */
    private static long time() {
        String[] reply = RedisServer.shared().command(null, "TIME").split("\r\n", -1); // *2, $10, s, $6, us
        return Long.parseLong(reply[2]) * 1_000_000 + Long.parseLong(reply[4]);
    }
}
