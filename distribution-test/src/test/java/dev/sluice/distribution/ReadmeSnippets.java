package dev.sluice.distribution;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.w3c.dom.Element;

/** The ```xml blocks of the README files, as a reader copies them. */
final class ReadmeSnippets {
    private ReadmeSnippets() {}

    /** One fenced block: its file, the line its fence opens on, and its text. */
    record Snippet(Path file, int line, String text) {
        /** The block as XML: wrapped in one element, since a snippet may hold several top-level elements. */
        Element parse() {
            return Xml.parse("<snippet>\n" + text + "\n</snippet>", this.toString());
        }

        @Override
        public String toString() {
            return file + ":" + line;
        }
    }

    /** README.md and every module's README.md (one and two levels down: core/, examples/spring-boot-api/). */
    static List<Path> readmes(Path root) throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        try (Stream<Path> found = Files.find(
                root,
                3,
                (p, a) -> p.getFileName().toString().equals("README.md")
                        && !p.getParent().equals(root)
                        && !p.toString().contains("/target/")
                        && !p.toString().contains("/node_modules/")
                        && !p.toString().contains("/src/"))) {
            found.sorted().forEach(files::add);
        }
        return files;
    }

    static List<Snippet> xmlBlocks(Path markdown) throws IOException {
        List<String> lines = Files.readAllLines(markdown);
        List<Snippet> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).strip().equals("```xml")) {
                int start = i;
                StringBuilder text = new StringBuilder();
                while (++i < lines.size() && !lines.get(i).strip().startsWith("```")) {
                    text.append(lines.get(i)).append('\n');
                }
                blocks.add(new Snippet(markdown, start + 1, text.toString()));
            }
        }
        return blocks;
    }
}
