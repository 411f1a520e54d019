package dev.sluice.server.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The dashboard page's files, plain HTML, JavaScript and CSS from the jar ({@code dev/sluice/server/dashboard/}),
 * read once: {@code GET /} and {@code /ui} (the page), {@code /ui/dashboard.js}, {@code /ui/dashboard-tables.js}, {@code /ui/dashboard.css}. They
 * hold no data (that is {@code GET /v1/dashboard}, behind the token like the rest of {@code /v1}), so they need no
 * token. The page's Content-Security-Policy allows only its own script, style and requests to this origin: even if a
 * key sent by a caller were ever put into the page as markup, no script of it would run.
 */
final class DashboardAssets {
    /** The page's own policy: nothing inline, nothing from elsewhere, not framed. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    /** One file: its type, bytes and response headers. */
    static final class Asset {
        private final String contentType;
        private final byte[] body;
        private final Map<String, String> headers;

        Asset(String contentType, byte[] body, Map<String, String> headers) {
            this.contentType = contentType;
            this.body = body;
            this.headers = headers;
        }

        String contentType() {
            return contentType;
        }

        /** The file's bytes, shared: the caller must not change them. */
        byte[] body() {
            return body;
        }

        Map<String, String> headers() {
            return headers;
        }
    }

    private static final Map<String, String> COMMON =
            Map.of("Cache-Control", "no-cache", "X-Content-Type-Options", "nosniff", "Referrer-Policy", "no-referrer");
    private static final Asset PAGE = load(
            "index.html",
            "text/html; charset=utf-8",
            Map.of(
                    "Cache-Control",
                    "no-cache",
                    "X-Content-Type-Options",
                    "nosniff",
                    "Referrer-Policy",
                    "no-referrer",
                    "Content-Security-Policy",
                    CONTENT_SECURITY_POLICY,
                    "X-Frame-Options",
                    "DENY"));
    private static final Asset SCRIPT = load("dashboard.js", "text/javascript; charset=utf-8", COMMON);
    private static final Asset TABLES = load("dashboard-tables.js", "text/javascript; charset=utf-8", COMMON);
    private static final Asset STYLE = load("dashboard.css", "text/css; charset=utf-8", COMMON);

    /** Headers of {@code GET /v1/dashboard}'s answers: never cached, never sniffed. */
    static final Map<String, String> DATA_HEADERS =
            Map.of("Cache-Control", "no-store", "X-Content-Type-Options", "nosniff");

    private DashboardAssets() {}

    /** The file served at {@code path}, or null when the path is none of the dashboard's. */
    static @Nullable Asset at(String path) {
        return switch (path) {
            case "/", "/ui" -> PAGE;
            case "/ui/dashboard.js" -> SCRIPT;
            case "/ui/dashboard-tables.js" -> TABLES;
            case "/ui/dashboard.css" -> STYLE;
            default -> null;
        };
    }

    private static Asset load(String name, String type, Map<String, String> headers) {
        String resource = "/dev/sluice/server/dashboard/" + name;
        try (InputStream in = DashboardAssets.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the jar");
            }
            return new Asset(type, in.readAllBytes(), headers);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
