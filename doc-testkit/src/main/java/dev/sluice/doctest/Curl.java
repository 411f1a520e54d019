package dev.sluice.doctest;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One {@code curl} command line of the docs, sent with the JDK's HTTP client to the service under test instead of the
 * host and port it names ({@code 127.0.0.1} or {@code localhost}, any port). The options the docs use are understood
 * ({@code -s -S -i -v -X -H -d --data --data-raw -o /dev/null -w}); any other is an error, so that a doc cannot
 * drift into a command this replay would not run as curl does.
 */
final class Curl {
    static final HttpClient CLIENT = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();

    private static final Pattern AUTHORITY =
            Pattern.compile("^(?:https?://)?(?:127\\.0\\.0\\.1|localhost):\\d+(/.*)?$");

    final String method;
    final String path;
    final List<String[]> headers;
    /** Null: no {@code -d}. */
    final @Nullable String body;

    final boolean include;
    final boolean discardBody;
    /** Null: no {@code -w}. */
    final @Nullable String writeOut;

    private Curl(
            String method,
            String path,
            List<String[]> headers,
            @Nullable String body,
            boolean include,
            boolean discardBody,
            @Nullable String writeOut) {
        this.method = method;
        this.path = path;
        this.headers = headers;
        this.body = body;
        this.include = include;
        this.discardBody = discardBody;
        this.writeOut = writeOut;
    }

    /** The command in {@code words} (the first is "curl"). */
    static Curl parse(List<String> words) {
        String method = null;
        String url = null;
        List<String[]> headers = new ArrayList<>();
        String body = null;
        boolean include = false;
        boolean discard = false;
        String writeOut = null;
        for (int i = 1; i < words.size(); i++) {
            String w = words.get(i);
            if (w.equals("-X") || w.equals("--request")) {
                method = words.get(++i);
            } else if (w.startsWith("-X") && w.length() > 2) {
                method = w.substring(2);
            } else if (w.equals("-H") || w.equals("--header")) {
                String h = words.get(++i);
                int colon = h.indexOf(':');
                headers.add(new String[] {
                    h.substring(0, colon).trim(), h.substring(colon + 1).trim()
                });
            } else if (w.equals("-d") || w.equals("--data") || w.equals("--data-raw")) {
                body = words.get(++i);
                if (body.startsWith("@")) {
                    throw new IllegalArgumentException("curl " + w + " @file is not replayed: put the body inline");
                }
            } else if (w.equals("-o") || w.equals("--output")) {
                String to = words.get(++i);
                if (!to.equals("/dev/null")) {
                    throw new IllegalArgumentException("curl -o " + to + " is not replayed: only -o /dev/null");
                }
                discard = true;
            } else if (w.equals("-w") || w.equals("--write-out")) {
                writeOut = words.get(++i);
            } else if (w.matches("-[siSv]+")) {
                include |= w.indexOf('i') >= 0;
            } else if (w.startsWith("-")) {
                throw new IllegalArgumentException("curl option " + w + " is not replayed by the doc tests");
            } else if (url == null) {
                url = w;
            } else {
                throw new IllegalArgumentException("curl with two URLs: " + url + " and " + w);
            }
        }
        if (url == null) {
            throw new IllegalArgumentException("curl without a URL");
        }
        Matcher m = AUTHORITY.matcher(url);
        if (!m.matches()) {
            throw new IllegalArgumentException("curl to " + url + ": a transcript calls 127.0.0.1 or localhost");
        }
        if (body != null && headers.stream().noneMatch(h -> h[0].equalsIgnoreCase("content-type"))) {
            headers.add(new String[] {"Content-Type", "application/x-www-form-urlencoded"}); // as curl -d does
        }
        String path = m.group(1) == null ? "/" : m.group(1);
        return new Curl(
                method != null ? method : body != null ? "POST" : "GET",
                path,
                headers,
                body,
                include,
                discard,
                writeOut);
    }

    /** What the service answered. */
    record Answer(int status, HttpHeaders headers, String body) {
        /** The status line and the headers, as {@code curl -i} prints them (without the reason phrase). */
        String head() {
            StringBuilder s = new StringBuilder("HTTP/1.1 ").append(status).append('\n');
            headers.map()
                    .forEach((name, values) -> values.forEach(
                            v -> s.append(name).append(": ").append(v).append('\n')));
            return s.toString();
        }
    }

    Answer send(URI base) throws IOException, InterruptedException {
        HttpRequest.Builder r = HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(30))
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        for (String[] h : headers) {
            r.header(h[0], h[1]);
        }
        HttpResponse<String> response = CLIENT.send(r.build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(response.statusCode(), response.headers(), response.body());
    }

    /** What curl writes to standard output for {@code a}: the head with {@code -i}, the body, the {@code -w} text. */
    String output(Answer a) {
        StringBuilder out = new StringBuilder();
        if (!discardBody) {
            if (include) {
                out.append(a.head()).append('\n');
            }
            out.append(a.body());
        }
        if (writeOut != null) {
            out.append(writeOut(writeOut, a));
        }
        return out.toString();
    }

    /** {@code format} (a {@code -w} text) with its variables replaced by {@code a}'s values. */
    private static String writeOut(String format, Answer a) {
        StringBuilder s = new StringBuilder();
        Matcher m = Pattern.compile("%\\{http_code}|%header\\{([^}]+)}|\\\\n").matcher(format);
        int last = 0;
        while (m.find()) {
            s.append(format, last, m.start());
            if (m.group().equals("%{http_code}")) {
                s.append(a.status());
            } else if (m.group(1) != null) {
                s.append(a.headers()
                        .firstValue(m.group(1).toLowerCase(Locale.ROOT))
                        .orElse(""));
            } else {
                s.append('\n');
            }
            last = m.end();
        }
        return s.append(format.substring(last)).toString();
    }
}
