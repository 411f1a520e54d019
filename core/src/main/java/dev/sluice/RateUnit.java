package dev.sluice;

import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Envoy's rate-limit units, the one table every configuration reads ({@code unit: minute} in the service's YAML,
 * {@code sluice.rules[0].unit} in Spring, {@code "unit": "minute"} in the JSON API, {@code Unit.MINUTE} over gRPC).
 * A month is 30 days and a year 365, as envoy counts them; any other length is a {@code window} instead.
 */
public enum RateUnit {
    SECOND(Duration.ofSeconds(1)),
    MINUTE(Duration.ofMinutes(1)),
    HOUR(Duration.ofHours(1)),
    DAY(Duration.ofDays(1)),
    WEEK(Duration.ofDays(7)),
    MONTH(Duration.ofDays(30)),
    YEAR(Duration.ofDays(365));

    private static final RateUnit[] ALL = values();
    private final Duration length;

    RateUnit(Duration length) {
        this.length = length;
    }

    /** How long one unit is. */
    public Duration length() {
        return length;
    }

    /** The name in configuration files: {@code second} … {@code year}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The unit named {@code name} (case and surrounding blanks forgiven).
     *
     * @throws IllegalArgumentException naming the value and the units there are
     */
    public static RateUnit fromConfigName(@Nullable String name) {
        String n = name == null ? "" : name.strip().toUpperCase(Locale.ROOT);
        for (RateUnit u : ALL) {
            if (u.name().equals(n)) {
                return u;
            }
        }
        throw new IllegalArgumentException(
                "unknown unit '" + name + "': use one of " + names() + ", or a window (e.g. 90s) for any other length");
    }

    /** The unit exactly {@code window} long, or null (a window that is no envoy unit). */
    public static @Nullable RateUnit ofLength(Duration window) {
        for (RateUnit u : ALL) {
            if (u.length.equals(window)) {
                return u;
            }
        }
        return null;
    }

    /** {@code second, minute, hour, day, week, month, year}. */
    public static String names() {
        StringBuilder b = new StringBuilder();
        for (RateUnit u : ALL) {
            b.append(b.length() == 0 ? "" : ", ").append(u.configName());
        }
        return b.toString();
    }
}
