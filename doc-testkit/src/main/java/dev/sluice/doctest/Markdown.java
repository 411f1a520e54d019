package dev.sluice.doctest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The fenced blocks of a Markdown file, each with the marker written just before it: an HTML comment such as
 * {@code <!-- java: given RateLimiter limiter -->} or {@code <!-- transcript: sluice serve -->}, invisible on the
 * rendered page, on the line before the fence (blank lines between are allowed). A fence is three or more backticks
 * with an info string ({@code ```java}); it ends at the next line of as many backticks.
 */
public final class Markdown {
    private Markdown() {}

    /** One fenced block: its file, the line its content starts on (1-based), its info string, marker and lines. */
    public record Fence(Path file, int line, String info, String marker, List<String> lines, int end) {
        /** The marker's kind ({@code java}, {@code transcript}), or "" when the block has no marker. */
        public String markerKind() {
            int colon = marker.indexOf(':');
            return colon < 0 ? marker : marker.substring(0, colon).trim();
        }

        /** What the marker says after its kind and colon. */
        public String markerText() {
            int colon = marker.indexOf(':');
            return colon < 0 ? "" : marker.substring(colon + 1).trim();
        }

        /** Where the block is, for messages: {@code README.md:42}. */
        public String where() {
            return Docs.relative(file) + ":" + line;
        }

        public String text() {
            return String.join("\n", lines);
        }
    }

    private static final Pattern FENCE = Pattern.compile("^(\\s*)(`{3,})\\s*([^`\\s]*).*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*(.*?)\\s*-->\\s*$");

    /** Every fenced block of {@code file}, in order. */
    public static List<Fence> fences(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Fence> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            String ticks = open.group(2);
            int j = i + 1;
            while (j < lines.size() && !lines.get(j).trim().equals(ticks)) {
                j++;
            }
            if (j == lines.size()) {
                throw new AssertionError(Docs.relative(file) + ":" + (i + 1) + ": a fence that is never closed");
            }
            List<String> content = new ArrayList<>();
            for (String l : lines.subList(i + 1, j)) {
                content.add(l.startsWith(indent) ? l.substring(indent.length()) : l.strip());
            }
            out.add(new Fence(file, i + 2, open.group(3), markerBefore(lines, i), List.copyOf(content), j + 1));
            i = j;
        }
        return out;
    }

    /** The HTML comment before line {@code i}, skipping blank lines, or "". */
    private static String markerBefore(List<String> lines, int i) {
        for (int k = i - 1; k >= 0; k--) {
            String l = lines.get(k);
            if (l.isBlank()) {
                continue;
            }
            Matcher m = MARKER.matcher(l);
            return m.matches() ? m.group(1) : "";
        }
        return "";
    }

    /** Every fenced block of every file, in order. */
    public static List<Fence> fences(List<Path> files) {
        return files.stream().flatMap(f -> fences(f).stream()).toList();
    }

    /** The lines of {@code file} between its fences and outside them, for checks on prose and tables. */
    public static Stream<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8).stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
