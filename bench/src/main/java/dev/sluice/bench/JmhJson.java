package dev.sluice.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Just enough JSON for JMH's result file ({@code -rf json}), which {@link Report} reads: objects, arrays, strings,
 * numbers, true, false, null.
 */
final class JmhJson {
    private final String s;
    private int i;

    JmhJson(String s) {
        this.s = s;
    }

    @Nullable
    Object value() {
        skip();
        char c = s.charAt(i);
        switch (c) {
            case '{' -> {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                skip();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                for (; ; ) {
                    skip();
                    String k = string();
                    skip();
                    expect(':');
                    m.put(k, value());
                    skip();
                    if (s.charAt(i++) == '}') {
                        return m;
                    }
                }
            }
            case '[' -> {
                List<Object> l = new ArrayList<>();
                i++;
                skip();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                for (; ; ) {
                    l.add(value());
                    skip();
                    if (s.charAt(i++) == ']') {
                        return l;
                    }
                }
            }
            case '"' -> {
                return string();
            }
            default -> {
                int start = i;
                while (i < s.length() && ",}] \n\r\t".indexOf(s.charAt(i)) < 0) {
                    i++;
                }
                String word = s.substring(start, i);
                return switch (word) {
                    case "true" -> true;
                    case "false" -> false;
                    case "null" -> null;
                    default -> Double.parseDouble(word);
                };
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder b = new StringBuilder();
        for (char c = s.charAt(i++); c != '"'; c = s.charAt(i++)) {
            if (c == '\\') {
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private void expect(char c) {
        if (s.charAt(i++) != c) {
            throw new IllegalArgumentException("expected '" + c + "' at offset " + (i - 1));
        }
    }

    private void skip() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
    }
}
