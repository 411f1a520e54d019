package dev.sluice.server.config;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps refusals readable when they quote what the caller sent. Problems name the bad value ({@code unknown domain
 * 'x'}), but the value may be a 4,000-character key or a huge YAML scalar aliased hundreds of times: a message quotes
 * the input, it does not copy it. Values over {@link #MAX_QUOTED} characters are cut and their length is given.
 */
public final class Messages {
    /** Quoted values longer than this are cut. */
    public static final int MAX_QUOTED = 80;
    /** A quoted run over the bound; a run holding '…' was cut already and is left alone. */
    private static final Pattern QUOTED = Pattern.compile("'([^'\\n…]{" + MAX_QUOTED + "})([^'\\n…]+)'");

    private Messages() {}

    /** {@code 'value'}, cut after {@link #MAX_QUOTED} characters, e.g. {@code 'kkkk…' (4096 characters)}. */
    public static String quote(String value) {
        return "'" + shorten(value) + "'" + (value.length() > MAX_QUOTED ? " (" + value.length() + " characters)" : "");
    }

    /** The value, cut after {@link #MAX_QUOTED} characters with '…' (for values a message does not quote). */
    public static String shorten(String value) {
        if (value.length() <= MAX_QUOTED) {
            return value;
        }
        int end = MAX_QUOTED;
        if (Character.isHighSurrogate(value.charAt(end - 1))) {
            end--; // never split a surrogate pair
        }
        return value.substring(0, end) + "…";
    }

    /** The message with every quoted value over {@link #MAX_QUOTED} characters cut, saying how long it was. */
    public static String abbreviateQuoted(String message) {
        if (message == null || message.length() <= 2 * MAX_QUOTED) {
            return message;
        }
        Matcher m = QUOTED.matcher(message);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String value = m.group(1) + m.group(2);
            m.appendReplacement(sb, Matcher.quoteReplacement(quote(value)));
        }
        m.appendTail(sb);
        return sb.toString();
    }
}
