package dev.sluice.server.config;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * How the service's options and rules name an enum's constants: in lower case ({@code io_uring}, {@code strict}),
 * read back in any case and with surrounding spaces. One rule for every such option.
 */
public final class ConfigNames {
    private ConfigNames() {}

    /** {@code e}'s name as written in options and rules: its constant's name in lower case. */
    public static String of(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /** The constant of {@code values} that {@code given} names (any case, spaces around ignored), or null. */
    public static <E extends Enum<E>> @Nullable E find(E[] values, String given) {
        String s = given.trim();
        for (E e : values) {
            if (e.name().equalsIgnoreCase(s)) {
                return e;
            }
        }
        return null;
    }
}
