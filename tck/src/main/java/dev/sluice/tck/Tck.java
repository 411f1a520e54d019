package dev.sluice.tck;

import dev.sluice.ManualTicker;
import java.time.Duration;
import java.util.UUID;

/** Shared constants and helpers of the conformance suite. */
public final class Tck {
    private Tck() {}

    /** 2026-01-01T00:00:00Z in epoch nanoseconds: aligned to seconds, minutes, hours and days. */
    public static final long T0 = 1_767_225_600L * 1_000_000_000L;

    /** Stores keep time to the microsecond; every instant the suite uses is a whole microsecond. */
    public static final long MICRO = 1_000L;

    /** A ticker frozen at {@link #T0}. */
    public static ManualTicker ticker() {
        return ManualTicker.atEpochNanos(T0);
    }

    /**
     * A key no other test uses, so suites can share one store (Redis, PostgreSQL) without cleanup. The
     * random part is a Redis hash tag ({@code tck:{…}:name}): keys a test derives from one base by
     * appending suffixes share a cluster slot, so multi-permit scenarios run on Redis Cluster too.
     */
    public static String key(String name) {
        return "tck:{" + UUID.randomUUID().toString().substring(0, 13) + "}:" + name;
    }

    public static long nanos(Duration d) {
        return d.toNanos();
    }

    public static long ms(long millis) {
        return millis * 1_000_000L;
    }

    public static long s(long seconds) {
        return seconds * 1_000_000_000L;
    }
}
