package dev.sluice.http;

/**
 * A JSON string literal, for the small JSON texts written by hand without a JSON library (problem details, the
 * service's answers and its JSON log lines): quotes and backslashes escaped, {@code \n \r \t} as such, and as
 * {@code \\uXXXX} the other control characters (C1 included), U+2028/U+2029 (line breaks to JavaScript and to some
 * line readers) and a surrogate without its pair (which UTF-8 cannot carry: it would become {@code ?}). Whatever the
 * string holds, the literal is one line that reads back to the same string.
 */
public final class JsonText {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonText() {}

    /** Appends {@code s} as a quoted JSON string; returns {@code sb}. */
    public static StringBuilder string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (Character.isHighSurrogate(c)
                            && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1))) {
                        sb.append(c).append(s.charAt(++i));
                    } else if (c < 0x20
                            || (c >= 0x7f && c <= 0x9f)
                            || c == 0x2028
                            || c == 0x2029
                            || Character.isSurrogate(c)) {
                        sb.append("\\u")
                                .append(HEX[c >> 12])
                                .append(HEX[c >> 8 & 0xf])
                                .append(HEX[c >> 4 & 0xf])
                                .append(HEX[c & 0xf]);
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }
}
