package dev.sluice.server.log;

import dev.sluice.http.JsonText;

/**
 * {@code time=2026-01-02T03:04:05.678Z level=INFO logger=dev.sluice.server.RulesWatcher event=rules_reloaded
 * domains=api,example rules=7}: logfmt, the default format of {@code sluice serve}. A value is written bare when it
 * is printable ASCII without a space, {@code =}, {@code "} or {@code \}; otherwise, and when empty, it is quoted
 * ({@link JsonText#string}). Every value is text ({@link LogValues}).
 */
public final class LogfmtEncoder extends LineEncoder {

    @Override
    void begin(StringBuilder line) {}

    @Override
    void field(StringBuilder line, boolean first, String key, Object value) {
        if (!first) {
            line.append(' ');
        }
        line.append(key).append('=');
        String text = LogValues.text(value);
        if (bare(text)) {
            line.append(text);
        } else {
            JsonText.string(line, text);
        }
    }

    @Override
    void end(StringBuilder line) {}

    private static boolean bare(String text) {
        if (text.isEmpty()) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c <= ' ' || c >= 0x7f || c == '=' || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }
}
