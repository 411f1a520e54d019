package dev.sluice.doctest;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An answer as the docs show it, compared with what the service answered. Two liberties, both visible in the doc:
 * {@code …} stands for any text (what the doc leaves out: repeated fields, a header's date), and a run of white space
 * matches any white space or none (a JSON answer laid out on several lines matches the service's one line). Nothing
 * else varies: the tests run the service on a frozen clock, so times and counts are exact.
 */
final class Expected {
    private Expected() {}

    /** Whether {@code actual} is what {@code expected} shows. */
    static boolean matches(String expected, String actual) {
        return pattern(expected).matcher(actual.strip()).matches();
    }

    private static Pattern pattern(String expected) {
        StringBuilder re = new StringBuilder();
        String[] parts = expected.strip().split("…", -1);
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                re.append("(?:.*?)");
            }
            String[] tokens = parts[i].split("\\s+", -1);
            for (int t = 0; t < tokens.length; t++) {
                if (t > 0) {
                    re.append("\\s*");
                }
                if (!tokens[t].isEmpty()) {
                    re.append(Pattern.quote(tokens[t]));
                }
            }
        }
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }

    private static final Pattern STATUS_LINE = Pattern.compile("^HTTP/\\S+ (\\d{3})\\b.*$");

    /**
     * The differences between an expected {@code curl -i} output (status line, headers, a blank line, the body) and
     * the answer: the status code, each header shown (others may be there too), the body. Empty when it matches.
     */
    static List<String> differencesWithHead(String expected, Curl.Answer answer) {
        List<String> out = new ArrayList<>();
        String[] lines = expected.strip().split("\n", -1);
        Matcher status = STATUS_LINE.matcher(lines[0].strip());
        if (!status.matches()) {
            out.add("the answer shown does not start with a status line: " + lines[0]);
            return out;
        }
        if (Integer.parseInt(status.group(1)) != answer.status()) {
            out.add("status " + answer.status() + ", the doc shows " + status.group(1));
        }
        int i = 1;
        for (; i < lines.length && !lines[i].isBlank(); i++) {
            String line = lines[i].strip();
            int colon = line.indexOf(':');
            if (colon < 0) {
                out.add("not a header line: " + line);
                continue;
            }
            String name = line.substring(0, colon).strip();
            String value = line.substring(colon + 1).strip();
            List<String> actual = answer.headers().allValues(name);
            if (actual.stream().noneMatch(v -> matches(value, v))) {
                out.add("header " + name + ": " + (actual.isEmpty() ? "absent" : String.join(" | ", actual))
                        + ", the doc shows " + value);
            }
        }
        String body = i < lines.length ? String.join("\n", List.of(lines).subList(i + 1, lines.length)) : "";
        if (!matches(body, answer.body())) {
            out.add("body " + answer.body() + "\n    the doc shows " + body.strip());
        }
        return out;
    }
}
