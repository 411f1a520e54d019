package dev.sluice.doctest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * ARCHITECTURE.md's package tables (the tables whose first column is headed {@code package}) name every package of
 * the main code, and only packages that exist. A name in a table's first column without {@code dev.} stands for one
 * under {@code dev.sluice} ({@code server.http} is {@code dev.sluice.server.http}).
 */
class ArchitectureTablesTest {

    @Test
    void thePackageTablesNameEveryPackageOfTheMainCodeAndNoOther() throws IOException {
        SortedMap<String, String> existing = mainPackages(Docs.root());
        Set<String> named = namedPackages(Docs.root().resolve("ARCHITECTURE.md"));
        Set<String> unnamed = new TreeSet<>(existing.keySet());
        unnamed.removeAll(named);
        Set<String> gone = new TreeSet<>(named);
        gone.removeAll(existing.keySet());
        List<String> unnamedWithModule =
                unnamed.stream().map(p -> p + " (" + existing.get(p) + ")").toList();
        assertThat(unnamedWithModule)
                .as("packages of the main code that ARCHITECTURE.md's package tables do not name")
                .isEmpty();
        assertThat(gone)
                .as("packages ARCHITECTURE.md's package tables name that no main code has")
                .isEmpty();
        assertThat(named).as("the tables were read").hasSizeGreaterThan(20);
    }

    /** Every package with a class under a {@code src/main/java} of the repository, and the module it is in. */
    static SortedMap<String, String> mainPackages(Path root) throws IOException {
        TreeMap<String, String> out = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> p.toString().endsWith(".java") && !p.toString().contains("/target/"))
                    .forEach(p -> {
                        String rel = root.relativize(p).toString().replace('\\', '/');
                        int at = rel.indexOf("/src/main/java/");
                        if (at < 0) {
                            return;
                        }
                        String dir = rel.substring(at + "/src/main/java/".length(), rel.lastIndexOf('/'));
                        out.put(dir.replace('/', '.'), rel.substring(0, at));
                    });
        }
        return out;
    }

    private static final Pattern CODE = Pattern.compile("`([a-z][\\w.]*)`");

    /** The names in the first column of every table of {@code file} whose first header cell is {@code package}. */
    static Set<String> namedPackages(Path file) {
        Set<String> out = new TreeSet<>();
        List<String> lines = Markdown.lines(file).toList();
        boolean inTable = false;
        List<String> header = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).strip();
            if (!l.startsWith("|")) {
                inTable = false;
                continue;
            }
            String first = l.substring(1, l.indexOf('|', 1)).strip();
            if (!inTable) {
                header.clear();
                header.add(first);
                inTable = true;
                continue;
            }
            if (!header.get(0).equals("package") || first.matches("-+")) {
                continue;
            }
            Matcher m = CODE.matcher(first);
            while (m.find()) {
                String name = m.group(1);
                out.add(name.startsWith("dev.") ? name : "dev.sluice." + name);
            }
        }
        return out;
    }
}
