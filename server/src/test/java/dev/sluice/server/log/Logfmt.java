package dev.sluice.server.log;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A strict logfmt reader for tests, written from the format's rules and not from the encoder: {@code key=value}
 * pairs separated by one space; a key is one or more characters other than space, {@code =} and {@code "}; a value
 * is bare (printable ASCII up to the next space, no {@code "}, {@code =} or {@code \}) or a quoted string with JSON's
 * escapes. Anything else — a stray quote, an unknown escape, a control character, a repeated key, text after the
 * closing quote — is an {@link IllegalArgumentException} naming the column.
 */
public final class Logfmt {
    private final String line;
    private int i;

    private Logfmt(String line) {
        this.line = line;
    }

    /** The pairs of one line (without its line break), in order. */
    public static Map<String, String> parse(String line) {
        return new Logfmt(line).pairs();
    }

    private Map<String, String> pairs() {
        Map<String, String> out = new LinkedHashMap<>();
        if (line.isEmpty()) {
            throw bad("an empty line");
        }
        while (true) {
            String key = key();
            expect('=');
            String value = i < line.length() && line.charAt(i) == '"' ? quoted() : bare();
            if (out.put(key, value) != null) {
                throw bad("key '" + key + "' a second time");
            }
            if (i == line.length()) {
                return out;
            }
            expect(' ');
        }
    }

    private String key() {
        int start = i;
        while (i < line.length()
                && line.charAt(i) > ' '
                && line.charAt(i) < 0x7f
                && line.charAt(i) != '='
                && line.charAt(i) != '"') {
            i++;
        }
        if (i == start) {
            throw bad("no key");
        }
        return line.substring(start, i);
    }

    private String bare() {
        int start = i;
        while (i < line.length() && line.charAt(i) != ' ') {
            char c = line.charAt(i);
            if (c < ' ' || c >= 0x7f || c == '"' || c == '=' || c == '\\') {
                throw bad("'" + c + "' in a bare value");
            }
            i++;
        }
        if (i == start) {
            throw bad("an empty bare value (an empty value is written \"\")");
        }
        return line.substring(start, i);
    }

    private String quoted() {
        StringBuilder b = new StringBuilder();
        i++;
        while (true) {
            if (i >= line.length()) {
                throw bad("no closing quote");
            }
            char c = line.charAt(i++);
            if (c == '"') {
                return b.toString();
            } else if (c < ' ') {
                throw bad("control character " + (int) c + " in a quoted value");
            } else if (c != '\\') {
                b.append(c);
                continue;
            }
            if (i >= line.length()) {
                throw bad("a backslash at the end");
            }
            char e = line.charAt(i++);
            switch (e) {
                case '"', '\\', '/' -> b.append(e);
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case 't' -> b.append('\t');
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'u' -> {
                    if (i + 4 > line.length()) {
                        throw bad("a short \\u escape");
                    }
                    b.append((char) Integer.parseInt(line.substring(i, i + 4), 16));
                    i += 4;
                }
                default -> throw bad("unknown escape \\" + e);
            }
        }
    }

    private void expect(char c) {
        if (i >= line.length() || line.charAt(i) != c) {
            throw bad("'" + c + "' expected");
        }
        i++;
    }

    private IllegalArgumentException bad(String what) {
        return new IllegalArgumentException("not logfmt: " + what + " at column " + i + " of: " + line);
    }
}
