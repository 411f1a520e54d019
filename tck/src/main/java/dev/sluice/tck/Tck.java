package dev.sluice.tck;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
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

    /**
     * A random differential step's advance of time, in microseconds: none 30% of the time, up to a third of the longest
     * window mostly, now and then up to three windows (so windows end and logs slide out).
     */
    static long randomStepMicros(SplittableRandom random, long maxWindowNanos) {
        int dice = random.nextInt(100);
        return dice < 30
                ? 0
                : dice < 92
                        ? random.nextLong(0, maxWindowNanos / 3000 + 1)
                        : random.nextLong(0, 3 * maxWindowNanos / 1000 + 1);
    }

    /** One limit of each algorithm holding {@code capacity} an hour: what the concurrency proofs hammer. */
    static List<Limit> everyAlgorithmPerHour(long capacity) {
        return List.of(
                Limit.tokenBucket(capacity, Rate.perHour(1)),
                Limit.gcra(Rate.perHour(1), capacity),
                Limit.fixedWindow(capacity, Duration.ofHours(1)),
                Limit.slidingWindow(capacity, Duration.ofHours(1)),
                Limit.slidingLog(capacity, Duration.ofHours(1)));
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
