package dev.sluice;

import java.time.Duration;
import java.util.Objects;

/**
 * A rate: {@code permits} every {@code period}. The emission interval, the time one permit takes
 * to come back, is {@code period / permits}; Sluice keeps it as an exact fraction (see
 * {@link Limit#timeScale()}), so a rate such as 3 per second loses nothing to rounding.
 *
 * <p>Periods are at least 1 ms and at most {@link #MAX_PERIOD}; permits are at least 1.
 */
public record Rate(long permits, Duration period) {

    /** The longest period a rate or window may have: 100 years, so nanoseconds fit a {@code long}. */
    public static final Duration MAX_PERIOD = Duration.ofDays(36_525);

    /** The shortest period or window: 1 ms. */
    public static final Duration MIN_PERIOD = Duration.ofMillis(1);

    public Rate {
        Objects.requireNonNull(period, "period must not be null: give a Duration of at least 1 ms");
        if (permits < 1) {
            throw new IllegalArgumentException(
                    "permits " + permits + " must be at least 1: a rate that refills nothing cannot admit anything");
        }
        checkDuration("period", period);
    }

    public static Rate of(long permits, Duration period) {
        return new Rate(permits, period);
    }

    public static Rate perSecond(long permits) {
        return new Rate(permits, Duration.ofSeconds(1));
    }

    public static Rate perMinute(long permits) {
        return new Rate(permits, Duration.ofMinutes(1));
    }

    public static Rate perHour(long permits) {
        return new Rate(permits, Duration.ofHours(1));
    }

    public static Rate perDay(long permits) {
        return new Rate(permits, Duration.ofDays(1));
    }

    /** The period in nanoseconds. */
    public long periodNanos() {
        return period.toNanos();
    }

    static void checkDuration(String what, Duration d) {
        if (d.compareTo(MIN_PERIOD) < 0) {
            throw new IllegalArgumentException(
                    what + " " + d + " is shorter than 1 ms: use a " + what + " of at least Duration.ofMillis(1)");
        }
        if (d.compareTo(MAX_PERIOD) > 0) {
            throw new IllegalArgumentException(
                    what + " " + d + " is longer than " + MAX_PERIOD.toDays() + " days: use a shorter " + what);
        }
    }

    @Override
    public String toString() {
        return permits + "/" + Limit.formatDuration(period);
    }
}
