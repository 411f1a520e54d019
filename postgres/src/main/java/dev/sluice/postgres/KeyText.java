package dev.sluice.postgres;

import dev.sluice.Limit;
import dev.sluice.Permit;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** What a key may hold in PostgreSQL {@code text}, and how keys appear in messages. */
final class KeyText {
    private KeyText() {}

    /**
     * {@code " for key \"…\" under <limit>"}, {@code " for key \"…\" (work in flight)"} without a limit, or nothing
     * for the limiter's own work (no key).
     */
    static String about(@Nullable String key, @Nullable Limit limit) {
        if (key == null) {
            return "";
        }
        return " for key \"" + Permit.abbreviate(key) + "\""
                + (limit == null ? " (work in flight)" : " under " + limit);
    }

    /**
     * PostgreSQL {@code text} holds any Unicode string except one containing U+0000, and the driver
     * cannot send an unpaired UTF-16 surrogate (it has no UTF-8 form: it would be replaced, and two keys
     * could then share a bucket). Both are refused before anything is sent.
     */
    static void check(String key) {
        for (int i = 0, n = key.length(); i < n; i++) {
            char ch = key.charAt(i);
            if (ch == 0) {
                throw new IllegalArgumentException(
                        "key \"" + Permit.abbreviate(key).replace("\0", "\\0")
                                + "\" contains a NUL character (U+0000) at index " + i
                                + ": PostgreSQL text cannot store it; remove it, or encode the key (e.g. hex or Base64) first");
            }
            if (Character.isHighSurrogate(ch) && i + 1 < n && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(ch)) {
                throw new IllegalArgumentException(
                        "key \"" + Permit.abbreviate(key) + "\" contains an unpaired UTF-16 surrogate"
                                + " (U+" + Integer.toHexString(ch).toUpperCase(Locale.ROOT) + ") at index " + i
                                + ": it has no UTF-8 form, so PostgreSQL cannot store it; pass well-formed Unicode");
            }
        }
    }
}
