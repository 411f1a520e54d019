package dev.sluice.server.config;

import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Durations as operators write them: {@code 90s}, {@code 1500ms}, {@code 1h30m}, {@code 2d}. Units are
 * {@code ns, us, ms, s, m, h, d, w}; parts add up. Used for {@code window:} in rules and for flags such as
 * {@code --store-timeout}.
 */
public final class Durations {
    private Durations() {}

    /** Parses {@code text}; throws {@link IllegalArgumentException} naming the text and the accepted form. */
    public static Duration parse(@Nullable String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("duration is empty: write e.g. 90s, 1500ms, 1h30m");
        }
        String s = text.trim().toLowerCase(Locale.ROOT);
        long totalNanos = 0;
        int i = 0;
        while (i < s.length()) {
            int start = i;
            while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') { // not other scripts' digits
                i++;
            }
            if (i == start || i - start > 18) {
                throw bad(text);
            }
            long n = Long.parseLong(s.substring(start, i));
            int unitStart = i;
            while (i < s.length() && Character.isLetter(s.charAt(i))) {
                i++;
            }
            long unitNanos = switch (s.substring(unitStart, i)) {
                case "ns" -> 1L;
                case "us", "µs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> 1_000_000_000L;
                case "m" -> 60_000_000_000L;
                case "h" -> 3_600_000_000_000L;
                case "d" -> 86_400_000_000_000L;
                case "w" -> 7 * 86_400_000_000_000L;
                default -> throw bad(text);
            };
            try {
                totalNanos = Math.addExact(totalNanos, Math.multiplyExact(n, unitNanos));
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("duration '" + text + "' is too long: at most about 292 years");
            }
        }
        return Duration.ofNanos(totalNanos);
    }

    /** The shortest exact spelling: {@code 90s}, {@code 1500ms}, {@code 2d}. */
    public static String format(Duration d) {
        long n = d.toNanos();
        long[] units = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L};
        String[] names = {"d", "h", "m", "s", "ms", "us"};
        for (int k = 0; k < units.length; k++) {
            if (n != 0 && n % units[k] == 0) {
                return n / units[k] + names[k];
            }
        }
        return n + "ns";
    }

    private static IllegalArgumentException bad(String text) {
        return new IllegalArgumentException(
                "duration '" + text
                        + "' is not understood: write a number and a unit (ns, us, ms, s, m, h, d, w), e.g. 90s, 1500ms, 1h30m");
    }
}
