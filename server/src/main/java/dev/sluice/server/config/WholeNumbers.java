package dev.sluice.server.config;

import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Whole numbers as YAML, envoy and a reader of a rules file write them: an optional sign, then the digits 0-9
 * ({@code _} between them allowed, as YAML 1.1 has it). Not {@code Long.parseLong} alone: it also reads other
 * scripts' digits ({@code '\u0663'} as 3), which envoy's loader refuses.
 */
final class WholeNumbers {
    private static final Pattern WHOLE = Pattern.compile("[-+]?[0-9]+");

    private WholeNumbers() {}

    /** The number {@code text} spells, or null when it spells none (or one too big for a long). */
    static @Nullable Long parse(String text) {
        String digits = text.trim().replace("_", "");
        if (!WHOLE.matcher(digits).matches()) {
            return null;
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return null; // too big
        }
    }

    /** Why {@code text}, the value of setting {@code what}, is no whole number. */
    static String problem(String what, String text) {
        boolean otherDigits = text.codePoints().anyMatch(c -> Character.isDigit(c) && (c < '0' || c > '9'));
        return "'" + what + "' must be a whole number" + (otherDigits ? " written with 0-9" : "") + ", not "
                + Messages.quote(text);
    }
}
