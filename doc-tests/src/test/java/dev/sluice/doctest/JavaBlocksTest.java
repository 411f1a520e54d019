package dev.sluice.doctest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block of every README compiles against the reactor's modules, as {@link JavaBlock} wraps it:
 * what a reader pastes is Sluice's API as it is. A block that is not Java is not marked java ({@code text},
 * {@code yaml}, …).
 */
class JavaBlocksTest {

    @Test
    void everyJavaBlockOfTheReadmesCompiles(@TempDir Path out) {
        List<JavaBlock> blocks = new ArrayList<>();
        for (Markdown.Fence f : Markdown.fences(Docs.readmes())) {
            if (f.info().equals("java")) {
                blocks.add(new JavaBlock(f, blocks.size()));
            }
        }
        assertThat(blocks).as("java blocks found in %s", Docs.readmes()).hasSizeGreaterThan(20);
        List<String> errors = compile(blocks, out);
        assertThat(errors)
                .as("java blocks that do not compile (%d blocks compiled)", blocks.size())
                .isEmpty();
    }

    /** Compiles every block in one javac run; returns each error as {@code README.md:42: message}. */
    static List<String> compile(List<JavaBlock> blocks, Path out) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<Source> sources = blocks.stream().map(Source::new).toList();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> options = List.of("--release", "17", "-proc:none", "-classpath", classpath, "-d", out.toString());
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            javac.getTask(null, files, diagnostics, options, null, sources).call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> errors = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            String where = d.getSource() instanceof Source s
                    ? s.block.where(d.getLineNumber())
                    : String.valueOf(d.getSource());
            errors.add(where + ": " + d.getMessage(Locale.ROOT));
        }
        return errors;
    }

    /** A block's source as javac reads it, named after its package and type. */
    private static final class Source extends SimpleJavaFileObject {
        final JavaBlock block;

        Source(JavaBlock block) {
            super(
                    URI.create("string:///" + block.packageName.replace('.', '/') + "/" + block.typeName + ".java"),
                    Kind.SOURCE);
            this.block = block;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return block.source;
        }
    }

    @Test
    void aBlockThatDoesNotCompileIsReportedAtItsLine(@TempDir Path dir) throws IOException {
        // the check itself: a block using List.of without importing it, as postgres/README.md's quick start once did
        Path readme = dir.resolve("README.md");
        Files.writeString(readme, """
                Text.

                ```java
                import dev.sluice.*;

                Limit perUser = Limit.tokenBucket(10, Rate.perSecond(1));
                var permits = List.of(Permit.of("user:42", perUser));
                ```

                <!-- java: given RateLimiter limiter; import dev.sluice.*, java.util.List -->
                ```java
                Decision d = limiter.tryAcquire(List.of(Permit.of("user:42", Limit.gcra(Rate.perSecond(1), 1))));
                ```
                """);
        List<JavaBlock> blocks = new ArrayList<>();
        for (Markdown.Fence f : Markdown.fences(readme)) {
            blocks.add(new JavaBlock(f, blocks.size()));
        }
        List<String> errors = compile(blocks, Files.createDirectories(dir.resolve("classes")));
        assertThat(errors)
                .singleElement()
                .asString()
                .endsWith("README.md:7: cannot find symbol\n"
                        + "  symbol:   variable List\n  location: class snippets.b0.Snippet");
    }
}
