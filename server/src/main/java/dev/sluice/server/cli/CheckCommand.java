package dev.sluice.server.cli;

import dev.sluice.http.JsonText;
import dev.sluice.server.decision.RateLimitHeaders;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice check}: one decision from the command line, asked of a running service. Exit code 0 when
 * allowed, 1 when over the limit, 2 when the request failed.
 *
 * <p>A command a person types to show a denial, so it starts fast: {@link Launcher} runs it without the rest of the
 * command line, and it touches no server class, no logging, no Jackson and no {@code java.net.http} (the JDK's
 * {@link HttpURLConnection} and {@link JsonText} do), which left about a third of the JVM's start-up to pay.
 */
@Command(
        name = "check",
        mixinStandardHelpOptions = true,
        description = "Ask a running service for one decision. Exit 0 = OK, 1 = OVER_LIMIT, 2 = error.",
        footer = {
            "",
            "Example:",
            "  sluice check --domain api remote_address=198.51.100.1",
            "  sluice check --domain api --hits 0 plan=free,user=42   (check only: consumes nothing)"
        })
final class CheckCommand implements Callable<Integer> {
    private static final int CONNECT_TIMEOUT_MILLIS = 3_000;
    private static final int READ_TIMEOUT_MILLIS = 5_000;

    @Option(
            names = "--url",
            defaultValue = "http://127.0.0.1:8080",
            description = "Service base URL (default ${DEFAULT-VALUE})")
    String url;

    @Option(
            names = {"-d", "--domain"},
            required = true,
            description = "Rules domain")
    String domain;

    @Option(
            names = "--hits",
            defaultValue = "1",
            description = "Permits to spend; 0 = check only (default ${DEFAULT-VALUE})")
    long hits;

    @Option(
            names = "--token",
            defaultValue = "${env:SLUICE_TOKEN}",
            description = "Bearer token (default: $SLUICE_TOKEN)")
    @Nullable
    String token;

    @Parameters(
            arity = "1..*",
            paramLabel = "KEY=VALUE[,KEY=VALUE...]",
            description = "One descriptor per argument; entries separated by commas")
    List<String> descriptors;

    /** {@code sluice check ARGS} alone: its own command line, without the others' classes. */
    static int run(String... args) {
        return new CommandLine(new CheckCommand())
                .setCommandName("sluice check")
                .execute(args);
    }

    @Override
    public Integer call() {
        StringBuilder body = new StringBuilder(128).append("{\"domain\":");
        JsonText.string(body, domain).append(",\"hits\":").append(hits).append(",\"descriptors\":[");
        for (int d = 0; d < descriptors.size(); d++) {
            body.append(d == 0 ? "" : ",").append("{\"entries\":[");
            // limit 0: a trailing comma is forgiven (trailing empty strings are dropped), as it always was
            String[] pairs = descriptors.get(d).split(",", 0);
            for (int i = 0; i < pairs.length; i++) {
                int eq = pairs[i].indexOf('=');
                if (eq <= 0) {
                    System.err.println("sluice check: '" + pairs[i] + "' is not KEY=VALUE");
                    return 2;
                }
                JsonText.string(body.append(i == 0 ? "{\"key\":" : ",{\"key\":"), pairs[i].substring(0, eq));
                JsonText.string(body.append(",\"value\":"), pairs[i].substring(eq + 1))
                        .append('}');
            }
            body.append("]}");
        }
        body.append("]}");
        HttpURLConnection c;
        int status;
        String answer;
        try {
            c = (HttpURLConnection)
                    URI.create(url.replaceAll("/+$", "") + "/v1/check").toURL().openConnection();
            c.setConnectTimeout(CONNECT_TIMEOUT_MILLIS);
            c.setReadTimeout(READ_TIMEOUT_MILLIS);
            c.setRequestMethod("POST");
            c.setDoOutput(true);
            c.setRequestProperty("Content-Type", "application/json");
            if (token != null && !token.isBlank()) {
                c.setRequestProperty("Authorization", "Bearer " + token.trim());
            }
            try (OutputStream out = c.getOutputStream()) {
                out.write(body.toString().getBytes(StandardCharsets.UTF_8));
            }
            status = c.getResponseCode();
            try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
                answer = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException | IllegalArgumentException e) {
            System.err.println(
                    "sluice check: cannot reach " + url + ": " + e + " (is 'sluice serve' running? pass --url)");
            return 2;
        }
        System.out.println("HTTP " + status);
        for (String h : List.of("RateLimit-Policy", "RateLimit", "Retry-After", RateLimitHeaders.DEGRADED)) {
            String v = c.getHeaderField(h);
            if (v != null) {
                System.out.println(h + ": " + v);
            }
        }
        System.out.println(indent(answer));
        return status == 200 ? 0 : status == 429 ? 1 : 2;
    }

    /**
     * The service's one-line JSON laid out two spaces a level, one member a line, as a person reads it; anything
     * that is not JSON comes back as it was (strings are copied whole, escapes and all).
     */
    static String indent(String json) {
        String s = json.strip();
        if (!s.startsWith("{") && !s.startsWith("[")) {
            return json;
        }
        StringBuilder out = new StringBuilder(s.length() * 2);
        int depth = 0;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch == '"') {
                int end = i + 1;
                while (end < s.length() && s.charAt(end) != '"') {
                    end += s.charAt(end) == '\\' ? 2 : 1;
                }
                out.append(s, i, Math.min(end + 1, s.length()));
                i = end;
            } else if (ch == '{' || ch == '[') {
                boolean empty = i + 1 < s.length() && s.charAt(i + 1) == (ch == '{' ? '}' : ']');
                out.append(ch);
                if (empty) {
                    out.append(s.charAt(++i));
                } else {
                    newline(out, ++depth);
                }
            } else if (ch == '}' || ch == ']') {
                newline(out, --depth);
                out.append(ch);
            } else if (ch == ',') {
                newline(out.append(','), depth);
            } else if (ch == ':') {
                out.append(": ");
            } else if (!Character.isWhitespace(ch)) {
                out.append(ch);
            }
        }
        return out.toString();
    }

    private static void newline(StringBuilder out, int depth) {
        out.append('\n').append("  ".repeat(Math.max(0, depth)));
    }
}
