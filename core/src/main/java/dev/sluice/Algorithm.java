package dev.sluice;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** The five algorithms. Names match the service's YAML ({@code algorithm: token_bucket}). */
public enum Algorithm {
    /** A bucket of {@code capacity} tokens refilled at a rate; starts full. */
    TOKEN_BUCKET("token_bucket", "tb"),
    /** Generic cell rate algorithm: the token bucket expressed as one theoretical arrival time. */
    GCRA("gcra", "gcra"),
    /** A counter per epoch-aligned window. */
    FIXED_WINDOW("fixed_window", "fw"),
    /** Two fixed windows, the previous one weighted by how much of it still overlaps. */
    SLIDING_WINDOW("sliding_window", "sw"),
    /** Every admission logged: exact over any trailing window, memory grows with permits. */
    SLIDING_LOG("sliding_log", "sl");

    private final String configName;
    private final String shortName;

    Algorithm(String configName, String shortName) {
        this.configName = configName;
        this.shortName = shortName;
    }

    /** The name used in configuration files: {@code token_bucket}, {@code gcra}, … */
    public String configName() {
        return configName;
    }

    /** The short tag used in store keys: {@code tb}, {@code gcra}, {@code fw}, {@code sw}, {@code sl}. */
    public String shortName() {
        return shortName;
    }

    /** True for the algorithms whose state is one theoretical arrival time (they support reserve). */
    public boolean isTat() {
        return this == TOKEN_BUCKET || this == GCRA;
    }

    /** Parses a configuration name such as {@code sliding_window}; case and dashes are forgiven. */
    public static Algorithm fromConfigName(@Nullable String name) {
        String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        for (Algorithm a : values()) {
            if (a.configName.equals(n)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown algorithm '" + name
                + "': use one of token_bucket, gcra, fixed_window, sliding_window, sliding_log");
    }
}
