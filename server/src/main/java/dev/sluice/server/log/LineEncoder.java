package dev.sluice.server.log;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.event.KeyValuePair;

/**
 * One log event as one line of UTF-8, whoever logged it: the fixed fields {@code time} (UTC, milliseconds),
 * {@code level} and {@code logger} (the full logger name, the one a level is set on), then the event's own
 * key/values in the order they were added (Sluice's lines start with {@code event}), then {@code msg} (a library's
 * text, or Sluice's core's plain sentences) and {@code exception} (the stack trace, causes included, folded into the
 * one value). A key's characters other than letters, digits, {@code _ . -} become {@code _}, and a key/value whose
 * key is already on the line (a fixed field's, or an earlier pair's) gets a leading {@code _}: no key appears twice.
 *
 * <p>{@link LogfmtEncoder} and {@link JsonLinesEncoder} differ only in how a field is written. Both quote a string
 * with JSON's escapes ({@link dev.sluice.http.JsonText}), which logfmt readers (go-logfmt, Loki's) read too: whatever
 * a value holds — quotes, backslashes, newlines, control characters, Unicode line separators, a lone surrogate — the
 * line stays one line that reads back to the value; other characters, non-ASCII included, are written as themselves.
 *
 * <p>An encoder may run on several threads at once (logback encodes before it takes the appender's lock): it keeps
 * no state between events.
 */
abstract class LineEncoder extends EncoderBase<ILoggingEvent> {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final Set<String> FIXED = Set.of("time", "level", "logger", "msg", "exception");

    @Override
    public byte @Nullable [] headerBytes() {
        return null;
    }

    @Override
    public byte @Nullable [] footerBytes() {
        return null;
    }

    @Override
    public byte[] encode(ILoggingEvent event) {
        StringBuilder line = new StringBuilder(256);
        begin(line);
        field(line, true, "time", TIME.format(event.getInstant()));
        field(line, false, "level", event.getLevel().toString());
        field(line, false, "logger", event.getLoggerName());
        List<KeyValuePair> pairs = event.getKeyValuePairs();
        if (pairs != null) {
            List<String> written = new ArrayList<>(pairs.size());
            for (KeyValuePair kv : pairs) {
                String key = key(kv.key);
                while (FIXED.contains(key) || written.contains(key)) {
                    key = "_" + key;
                }
                written.add(key);
                field(line, false, key, kv.value);
            }
        }
        String msg = event.getFormattedMessage();
        if (msg != null) {
            field(line, false, "msg", msg);
        }
        IThrowableProxy thrown = event.getThrowableProxy();
        if (thrown != null) {
            field(line, false, "exception", ThrowableProxyUtil.asString(thrown).strip());
        }
        end(line);
        line.append('\n');
        return line.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** What comes before the first field (<code>{</code> in JSON). */
    abstract void begin(StringBuilder line);

    /** One field, {@code key} already a safe key; {@code value} as the event holds it (rendered by the encoder). */
    abstract void field(StringBuilder line, boolean first, String key, Object value);

    /** What comes after the last field ({@code }} in JSON). */
    abstract void end(StringBuilder line);

    /** A key as logged: letters, digits, {@code _ . -} (an empty key is {@code _}). */
    static String key(String key) {
        if (key == null || key.isEmpty()) {
            return "_";
        }
        StringBuilder b = null;
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '_'
                    || c == '.'
                    || c == '-';
            if (!ok && b == null) {
                b = new StringBuilder(key.length()).append(key, 0, i);
            }
            if (b != null) {
                b.append(ok ? c : '_');
            }
        }
        return b == null ? key : b.toString();
    }
}
