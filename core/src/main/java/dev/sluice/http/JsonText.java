package dev.sluice.http;

/**
 * A JSON string literal, for the few small JSON bodies the integrations write by hand (problem details), without a
 * JSON library: quotes and backslashes escaped, control characters and U+2028/U+2029 as {@code \\uXXXX}.
 */
public final class JsonText {
    private JsonText() {
    }

    /** Appends {@code s} as a quoted JSON string; returns {@code sb}. */
    public static StringBuilder string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }
}
