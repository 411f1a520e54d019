package dev.sluice.doctest;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code ```java} block of a README made into a compilation unit, the way {@link JavaBlocksTest} compiles it.
 *
 * <p>A block that declares a type ({@code class}, {@code record}, {@code interface}, {@code enum}, after its imports
 * and annotations) is a file as it stands. Any other block is statements, compiled as the body of a method
 * {@code void run(…)}. The marker before the block, {@code <!-- java: CLAUSE; CLAUSE -->}, is the block's explicit
 * preamble, invisible on the rendered page:
 * <ul>
 *   <li>{@code given TYPE NAME, TYPE NAME}: variables the statements use without declaring them (the method's
 *       parameters), e.g. {@code given RateLimiter limiter, Limit perUser};</li>
 *   <li>{@code import NAME, NAME}: the imports of a block that shows none ({@code import dev.sluice.*,
 *       java.time.Duration}); a block that shows import lines must show every import it needs, so this clause is
 *       refused there: what the reader copies is what compiles;</li>
 *   <li>{@code throws TYPE}: the method's checked exceptions, when the statements call a method that throws one.</li>
 * </ul>
 * No import is added otherwise, not even {@code java.util}: a block that uses {@code List.of} without importing
 * {@code java.util.List}, and shows its imports, fails.
 */
final class JavaBlock {
    private static final Pattern IMPORT = Pattern.compile("^\\s*import\\s+(static\\s+)?[\\w.]+(\\.\\*)?\\s*;.*$");
    private static final Pattern TYPE = Pattern.compile(
            "^\\s*(@\\w+(\\([^)]*\\))?\\s*)*((public|final|abstract|sealed)\\s+)*(class|interface|record|enum)\\s+(\\w+)");

    final Markdown.Fence fence;
    final String packageName;
    final String typeName;
    /** The source, and for each of its lines the Markdown line it comes from (0: the preamble). */
    final String source;

    final int[] markdownLine;

    JavaBlock(Markdown.Fence fence, int index) {
        this.fence = fence;
        this.packageName = "snippets.b" + index;
        String given = "";
        List<String> markerImports = new ArrayList<>();
        String throwsClause = "";
        if (!fence.marker().isEmpty()) {
            if (!fence.markerKind().equals("java")) {
                throw new AssertionError(fence.where() + ": a java block's marker is <!-- java: … -->, not <!-- "
                        + fence.marker() + " -->");
            }
            for (String clause : fence.markerText().split(";", -1)) {
                String c = clause.strip();
                if (c.startsWith("given ")) {
                    given = c.substring(6).strip();
                } else if (c.startsWith("import ")) {
                    for (String i : c.substring(7).split(",", -1)) {
                        if (!i.isBlank()) {
                            markerImports.add(i.strip());
                        }
                    }
                } else if (c.startsWith("throws ")) {
                    throwsClause = " throws " + c.substring(7).strip();
                } else if (!c.isEmpty()) {
                    throw new AssertionError(fence.where() + ": unknown clause '" + c + "' in the marker: use given, "
                            + "import or throws");
                }
            }
        }
        List<String> lines = fence.lines();
        int firstCode = 0;
        boolean showsImports = false;
        while (firstCode < lines.size()
                && (IMPORT.matcher(lines.get(firstCode)).matches()
                        || lines.get(firstCode).isBlank()
                        || lines.get(firstCode).strip().startsWith("//"))) {
            showsImports |= IMPORT.matcher(lines.get(firstCode)).matches();
            firstCode++;
        }
        if (showsImports && !markerImports.isEmpty()) {
            throw new AssertionError(fence.where() + ": the block shows its imports, so it must show all of them:"
                    + " move " + markerImports + " from the marker into the block");
        }
        // the declaration may follow annotations on lines of their own: read up to the first brace
        StringBuilder head = new StringBuilder();
        for (int k = firstCode; k < lines.size() && head.indexOf("{") < 0; k++) {
            head.append(lines.get(k)).append(' ');
        }
        Matcher type = TYPE.matcher(head);
        boolean unit = type.find();
        if (unit && !given.isEmpty()) {
            throw new AssertionError(fence.where() + ": a block that declares a type takes no 'given' variables");
        }
        this.typeName = unit ? type.group(6) : "Snippet";

        StringBuilder src = new StringBuilder();
        List<Integer> origin = new ArrayList<>();
        add(src, origin, "package " + packageName + ";", 0);
        for (String i : markerImports) {
            add(src, origin, "import " + i + ";", 0);
        }
        for (int k = 0; k < firstCode; k++) {
            add(src, origin, lines.get(k), fence.line() + k);
        }
        if (!unit) {
            add(src, origin, "class Snippet {", 0);
            add(src, origin, "    void run(" + given + ")" + throwsClause + " {", 0);
        }
        for (int k = firstCode; k < lines.size(); k++) {
            add(src, origin, lines.get(k), fence.line() + k);
        }
        if (!unit) {
            add(src, origin, "    }", 0);
            add(src, origin, "}", 0);
        }
        this.source = src.toString();
        this.markdownLine = origin.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void add(StringBuilder src, List<Integer> origin, String line, int markdownLine) {
        src.append(line).append('\n');
        origin.add(markdownLine);
    }

    /** Where line {@code sourceLine} (1-based) of the source comes from: {@code README.md:42}, or the marker's line. */
    String where(long sourceLine) {
        int i = (int) sourceLine - 1;
        int md = i >= 0 && i < markdownLine.length ? markdownLine[i] : 0;
        return md > 0 ? Docs.relative(fence.file()) + ":" + md : fence.where() + " (the preamble its marker gives)";
    }
}
