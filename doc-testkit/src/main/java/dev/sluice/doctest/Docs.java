package dev.sluice.doctest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Where the repository's docs are, found from any module's directory (a test's working directory). */
public final class Docs {
    private Docs() {}

    private static final Path ROOT = findRoot();

    private static Path findRoot() {
        Path p = Path.of("").toAbsolutePath();
        for (Path q = p; q != null; q = q.getParent()) {
            if (Files.isRegularFile(q.resolve("mvnw")) && Files.isRegularFile(q.resolve("ARCHITECTURE.md"))) {
                return q;
            }
        }
        throw new IllegalStateException("no repository root (a directory with mvnw and ARCHITECTURE.md) above " + p);
    }

    /** The repository's root directory. */
    public static Path root() {
        return ROOT;
    }

    /** {@code path} relative to the root, for messages. */
    public static String relative(Path path) {
        Path abs = path.toAbsolutePath();
        return abs.startsWith(ROOT) ? ROOT.relativize(abs).toString() : path.toString();
    }

    /**
     * Every README.md of the repository: the root's and each module's (build output, {@code node_modules} and
     * hidden directories left out), in path order.
     */
    public static List<Path> readmes() {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(ROOT)) {
            s.filter(p -> p.getFileName().toString().equals("README.md"))
                    .filter(p -> ROOT.relativize(p).toString().split("[/\\\\]").length <= 3)
                    .filter(p -> {
                        for (Path part : ROOT.relativize(p)) {
                            String n = part.toString();
                            if (n.equals("target") || n.equals("node_modules") || n.startsWith(".")) {
                                return false;
                            }
                        }
                        return true;
                    })
                    .sorted()
                    .forEach(out::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}
