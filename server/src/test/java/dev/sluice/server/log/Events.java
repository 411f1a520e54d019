package dev.sluice.server.log;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.encoder.Encoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.slf4j.event.KeyValuePair;

/** Log events built by hand for the encoder tests, and what an encoder makes of them. */
final class Events {
    private static final LoggerContext CONTEXT = new LoggerContext();
    static final Instant AT = Instant.parse("2026-01-02T03:04:05.678Z");

    private Events() {}

    /** An event at {@link #AT}; {@code keyValues} alternate key and value. */
    static LoggingEvent of(Level level, String logger, String message, Throwable thrown, Object... keyValues) {
        LoggingEvent e =
                new LoggingEvent(Events.class.getName(), CONTEXT.getLogger(logger), level, message, thrown, null);
        e.setInstant(AT);
        for (int i = 0; i < keyValues.length; i += 2) {
            e.addKeyValuePair(new KeyValuePair((String) keyValues[i], keyValues[i + 1]));
        }
        return e;
    }

    /** The encoder's bytes as UTF-8 text, checked to be exactly one line; returned without its line break. */
    static String line(Encoder<ILoggingEvent> encoder, ILoggingEvent event) {
        String text = new String(encoder.encode(event), StandardCharsets.UTF_8);
        if (!text.endsWith("\n")) {
            throw new AssertionError("no line break at the end of: " + text);
        }
        String line = text.substring(0, text.length() - 1);
        for (char c :
                new char[] {'\n', '\r', '\u000b', '\u000c', '\u001c', '\u001d', '\u001e', '\u0085', '\u2028', '\u2029'
                }) {
            if (line.indexOf(c) >= 0) {
                throw new AssertionError("a line break (U+" + Integer.toHexString(c) + ") inside the line: " + line);
            }
        }
        return line;
    }
}
