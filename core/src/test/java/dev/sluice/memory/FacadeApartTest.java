package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The in-memory store's shape (see {@link MemoryStore}): {@link InMemoryRateLimiter} is a facade, and no class of its
 * internals refers to it, so none can call back into it. Read from the compiled classes' constant pools, where every
 * class a class refers to is named.
 */
class FacadeApartTest {
    private static final String FACADE = "dev/sluice/memory/InMemoryRateLimiter";

    @Test
    void noInternalClassRefersToTheFacade() throws IOException, URISyntaxException {
        List<String> internals = internalClasses();
        assertThat(internals).contains("MemoryStore", "Segment", "Slots", "MemoryBound", "MultiPermit", "HotKeys");
        for (String name : internals) {
            assertThat(constantPool(name))
                    .as(name + " must not refer to the facade")
                    .doesNotContain(FACADE);
        }
    }

    /** Every class of the package but the facade and its own nested classes (its builder). */
    private static List<String> internalClasses() throws IOException, URISyntaxException {
        Path dir = Path.of(Objects.requireNonNull(MemoryStore.class.getResource("MemoryStore.class"))
                        .toURI())
                .getParent();
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(f -> f.endsWith(".class") && !f.endsWith("Test.class"))
                    .map(f -> f.substring(0, f.length() - ".class".length()))
                    .filter(n -> !n.equals("InMemoryRateLimiter") && !n.startsWith("InMemoryRateLimiter$"))
                    .sorted()
                    .toList();
        }
    }

    /** The class file's bytes as ISO-8859-1 text: its constant pool's class and descriptor names read as written. */
    private static String constantPool(String name) throws IOException {
        try (InputStream in = Objects.requireNonNull(MemoryStore.class.getResourceAsStream(name + ".class"))) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
