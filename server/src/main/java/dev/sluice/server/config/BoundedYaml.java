package dev.sluice.server.config;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.composer.Composer;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.parser.Parser;
import org.yaml.snakeyaml.parser.ParserImpl;
import org.yaml.snakeyaml.reader.ReaderException;
import org.yaml.snakeyaml.reader.StreamReader;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * YAML read as a hostile file would be: at most {@value #MAX_CHARS} characters, {@value #MAX_NESTING} levels of
 * nesting and {@value #MAX_COLLECTION_ALIASES} aliases of collections (alias bombs), no recursive keys; into
 * SnakeYAML's node trees, not objects, so that every problem can name its line. The rules themselves are
 * {@link RulesParser}'s.
 */
final class BoundedYaml {
    private BoundedYaml() {}

    /** The largest rules file read, in characters: SnakeYAML's code point limit, with room to say so. */
    static final int MAX_CHARS = 8 * 1024 * 1024;
    /** Deeper than this is not a rules file (envoy's examples nest 3 levels); also bounds the parser's stack. */
    static final int MAX_NESTING = 50;
    /** Aliases of lists and mappings: rules files rarely need any; a bound defuses alias bombs (billion laughs). */
    static final int MAX_COLLECTION_ALIASES = 20;

    /**
     * The documents of the YAML text {@code reader} gives, read within the bounds above; every problem (unreadable,
     * too large, not YAML, a bound hit) is added to {@code problems} as {@code source:line: what}, and the documents
     * read before it are returned.
     */
    static List<Node> documents(String source, Reader reader, List<String> problems) {
        // Read the text first (bounded): SnakeYAML's reader errors give a character position, not a line.
        String text;
        try {
            text = read(reader);
        } catch (IOException e) {
            problems.add(source + ":1: cannot read: " + e.getMessage());
            return List.of();
        }
        if (text == null) {
            problems.add(source + ":1: the file is over " + MAX_CHARS + " characters: rules files are far smaller; "
                    + "is this the right file?");
            return List.of();
        }
        LoaderOptions options = new LoaderOptions();
        options.setMaxAliasesForCollections(MAX_COLLECTION_ALIASES);
        options.setAllowRecursiveKeys(false);
        options.setNestingDepthLimit(MAX_NESTING);
        options.setCodePointLimit(MAX_CHARS);
        StreamReader stream = new StreamReader(new StringReader(text));
        TrackingParser events = new TrackingParser(new ParserImpl(stream, options));
        Composer composer = new Composer(events, new Resolver(), options);
        List<Node> out = new ArrayList<>();
        try {
            while (composer.checkNode()) {
                Node doc = composer.getNode();
                if (doc == null
                        || (doc instanceof ScalarNode sn
                                && sn.getTag().getValue().endsWith(":null"))) {
                    continue; // an empty document, e.g. after a trailing '---'
                }
                out.add(doc);
            }
        } catch (MarkedYAMLException e) {
            int line = e.getProblemMark() != null ? e.getProblemMark().getLine() + 1 : events.line();
            problems.add(source + ":" + line + ": not valid YAML: " + e.getProblem());
        } catch (ReaderException e) {
            problems.add(source + ":" + lineAt(text, e.getPosition()) + ": not valid YAML: the character "
                    + String.format("U+%04X", e.getCodePoint()) + " is not allowed in YAML: remove it (in a "
                    + "double-quoted string it may be written as an escape, e.g. \\u0000)");
        } catch (YAMLException e) {
            // the limits (nesting, aliases, size) carry no position: the last event read is where it stopped
            problems.add(source + ":" + events.line() + ": not valid YAML: " + limitMessage(e.getMessage()));
        } catch (NumberFormatException e) {
            // SnakeYAML takes any script's digit (Character.isDigit) for a %YAML version or a block scalar's
            // indentation, then Integer.parseInt fails on one outside the Basic Multilingual Plane; the reader
            // stands on or just past it
            int line = stream.getLine() + 1;
            problems.add(source + ":" + line + ": not valid YAML: " + notZeroToNine(text, line));
        }
        return out;
    }

    /** The first digit other than 0-9 on line {@code line} (1-based), named, and what to write instead. */
    private static String notZeroToNine(String text, int line) {
        String[] lines = text.split("\r\n|[\n\r\u0085\u2028\u2029]", -1);
        String l = line <= lines.length ? lines[line - 1] : "";
        int digit = l.codePoints()
                .filter(c -> Character.isDigit(c) && (c < '0' || c > '9'))
                .findFirst()
                .orElse(-1);
        String which = digit < 0
                ? "a digit"
                : "the digit '" + Character.toString(digit) + "' (" + String.format("U+%04X", digit) + ")";
        return which + " is not one of 0-9, the only digits YAML reads as a number here (a %YAML version, a block"
                + " scalar's indentation): write it with 0-9";
    }

    /** The whole text, or null when it is over {@link #MAX_CHARS}. */
    private static @Nullable String read(Reader reader) throws IOException {
        StringBuilder sb = new StringBuilder();
        char[] buf = new char[8192];
        for (int n; (n = reader.read(buf)) >= 0; ) {
            sb.append(buf, 0, n);
            if (sb.length() > MAX_CHARS) {
                return null;
            }
        }
        return sb.toString();
    }

    /** The 1-based line of the code point at {@code codePointIndex} (SnakeYAML counts code points). */
    static int lineAt(String text, int codePointIndex) {
        int end;
        try {
            end = text.offsetByCodePoints(
                    0, Math.max(0, Math.min(codePointIndex, text.codePointCount(0, text.length()))));
        } catch (IndexOutOfBoundsException e) {
            end = text.length();
        }
        int line = 1;
        for (int i = 0; i < end; i++) {
            char c = text.charAt(i);
            // YAML's line breaks: LF, CR (alone or before LF), NEL, LS, PS — as SnakeYAML counts them
            if (c == '\n'
                    || c == '\u0085'
                    || c == '\u2028'
                    || c == '\u2029'
                    || (c == '\r' && (i + 1 >= text.length() || text.charAt(i + 1) != '\n'))) {
                line++;
            }
        }
        return line;
    }

    /** SnakeYAML's limit messages, with what the limit is for and what to do. */
    private static String limitMessage(@Nullable String m) {
        String s = m == null ? "" : m;
        if (s.startsWith("Nesting Depth")) {
            return "nested deeper than " + MAX_NESTING + " levels: rules need only a few; flatten the file";
        }
        if (s.startsWith("Number of aliases")) {
            return "more than " + MAX_COLLECTION_ALIASES + " aliases (*name) of lists or mappings, the bound that "
                    + "stops alias bombs: write those parts out";
        }
        if (s.contains("exceeds the limit")) {
            return "the file is over " + MAX_CHARS
                    + " characters: rules files are far smaller; is this the right file?";
        }
        return s;
    }

    /**
     * Remembers where the last event started. SnakeYAML's limits (nesting, aliases, size) fail without a position;
     * this is how their problems still get a line.
     */
    private static final class TrackingParser implements Parser {
        private final Parser delegate;
        private @Nullable Mark last;

        TrackingParser(Parser delegate) {
            this.delegate = delegate;
        }

        int line() {
            return last == null ? 1 : last.getLine() + 1;
        }

        @Override
        public boolean checkEvent(Event.ID choice) {
            return delegate.checkEvent(choice);
        }

        @Override
        public Event peekEvent() {
            return delegate.peekEvent();
        }

        @Override
        public Event getEvent() {
            Event e = delegate.getEvent();
            if (e != null && e.getStartMark() != null) {
                last = e.getStartMark();
            }
            return e;
        }
    }
}
