package dev.sluice.server.log;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.Encoder;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** The format of {@code sluice serve}'s log lines: {@code --log-format logfmt} (the default) or {@code json}. */
public enum LogFormat {
    /** {@link LogfmtEncoder}; {@code text} is accepted too, as envoyproxy/ratelimit's {@code LOG_FORMAT} says it. */
    LOGFMT,
    /** {@link JsonLinesEncoder}: one JSON object a line. */
    JSON;

    /**
     * {@code logfmt}, {@code text} or {@code json}, in any case; null or blank is the default, logfmt. {@code what}
     * names where the text came from, for the error.
     */
    public static LogFormat parse(String what, @Nullable String text) {
        if (text == null || text.isBlank()) {
            return LOGFMT;
        }
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "logfmt", "text" -> LOGFMT;
            case "json" -> JSON;
            default ->
                throw new IllegalArgumentException(
                        what + " '" + text + "' is unknown: use logfmt (the " + "default) or json");
        };
    }

    Encoder<ILoggingEvent> encoder() {
        return this == JSON ? new JsonLinesEncoder() : new LogfmtEncoder();
    }
}
