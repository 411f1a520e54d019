package dev.sluice.server.log;

import dev.sluice.http.JsonText;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Path;

/**
 * {@code {"time":"2026-01-02T03:04:05.678Z","level":"INFO","logger":"dev.sluice.server.RulesWatcher",
 * "event":"rules_reloaded","domains":["api","example"],"rules":7}}: one JSON object a line ({@code --log-format json}),
 * the same fields as {@link LogfmtEncoder} in the same order. Integers, finite decimals and booleans are JSON
 * numbers and booleans, {@code null} is {@code null}, a collection is an array; everything else is a string as
 * {@link LogValues} writes it.
 */
public final class JsonLinesEncoder extends LineEncoder {

    @Override
    void begin(StringBuilder line) {
        line.append('{');
    }

    @Override
    void field(StringBuilder line, boolean first, String key, Object value) {
        if (!first) {
            line.append(',');
        }
        JsonText.string(line, key);
        line.append(':');
        value(line, value);
    }

    @Override
    void end(StringBuilder line) {
        line.append('}');
    }

    private static void value(StringBuilder line, Object value) {
        if (value instanceof Iterable<?> items && !(value instanceof Path)) {
            int start = line.length();
            try {
                line.append('[');
                for (Object item : items) {
                    line.append(line.length() == start + 1 ? "" : ",");
                    scalar(line, item);
                }
                line.append(']');
            } catch (RuntimeException changedWhileRead) {
                line.setLength(start);
                JsonText.string(line, LogValues.text(value));
            }
        } else {
            scalar(line, value);
        }
    }

    /** A value that is not a collection, or a collection's element (a string if it is one). */
    private static void scalar(StringBuilder line, Object value) {
        if (value == null) {
            line.append("null");
        } else if (value instanceof Boolean
                || value instanceof Integer
                || value instanceof Long
                || value instanceof Short
                || value instanceof Byte
                || value instanceof BigInteger
                || value instanceof BigDecimal) {
            line.append(value);
        } else if ((value instanceof Double || value instanceof Float)
                && Double.isFinite(((Number) value).doubleValue())) {
            line.append(value);
        } else {
            JsonText.string(line, LogValues.scalarText(value));
        }
    }
}
