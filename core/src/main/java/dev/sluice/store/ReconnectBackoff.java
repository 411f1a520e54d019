package dev.sluice.store;

import java.time.Duration;

/**
 * How long a store waits before it logs in again after the store refused its configuration (a wrong or rotated
 * password, a missing privilege): 1 s after the first refusal, doubling, at most {@link #MAX}. One schedule for every
 * store and for reopening a store, so that a database never sees a login storm from Sluice: a limiter whose
 * password was rotated under it tries about twice a minute, not five times a second.
 *
 * <p>An outage does not back off so: a refused connection costs the server nothing, and a store restarting beside
 * the service should be used again within its probe interval.
 */
public final class ReconnectBackoff {
    /** The wait after the first refusal. */
    public static final Duration FIRST = Duration.ofSeconds(1);
    /** The longest wait: a fixed configuration is picked up within this. */
    public static final Duration MAX = Duration.ofSeconds(30);

    private static final long FIRST_NANOS = FIRST.toNanos();
    private static final long MAX_NANOS = MAX.toNanos();

    private ReconnectBackoff() {}

    /** The wait after {@code refusals} refused attempts in a row (1 or more): 1 s, 2 s, 4 s, 8 s, 16 s, 30 s, 30 s… */
    public static long nanosAfter(int refusals) {
        if (refusals < 1) {
            return 0;
        }
        long wait = FIRST_NANOS;
        for (int i = 1; i < refusals && wait < MAX_NANOS; i++) {
            wait *= 2;
        }
        return Math.min(wait, MAX_NANOS);
    }
}
