package dev.sluice.dist;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The tarball the build made ({@code sluice.dist.tarball}), unpacked once per test run under {@code target/it}, and
 * the environment its tests run it in: no JDK anywhere on the {@code PATH} and no {@code JAVA_HOME}, as on a host
 * where no Java is installed. This machine has one ({@code /usr/bin/java}, the JDK running the build): the
 * {@code PATH} is therefore a directory of its own holding links to the few tools {@code bin/sluice} calls, and
 * nothing else.
 */
final class Distribution {
    /** A hang guard for one step that waits on a process (a JVM start, a shutdown), not a budget. */
    static final Duration GUARD = Duration.ofSeconds(90);

    /** What {@code bin/sluice} runs besides the shell's built-ins: {@code readlink}, to follow a symlink to it. */
    private static final List<String> TOOLS = List.of("readlink");

    private static Path home;

    private Distribution() {}

    /** The unpacked distribution ({@code …/sluice-VERSION}), fresh from the tarball at the first call of a run. */
    static synchronized Path home() {
        if (home == null) {
            Path tarball = Path.of(property("sluice.dist.tarball"));
            Path into = tarball.resolveSibling("it").resolve("unpacked");
            deleteRecursively(into);
            mkdirs(into);
            Run untar = run(
                    Map.of("PATH", System.getenv("PATH")),
                    List.of("tar", "-xzf", tarball.toString(), "-C", into.toString()));
            if (untar.exit() != 0) {
                throw new IllegalStateException("cannot unpack " + tarball + ": " + untar.stderr());
            }
            home = into.resolve(property("sluice.dist.name"));
        }
        return home;
    }

    /** The dist module's directory: its image/ and kubernetes/ recipes. */
    static Path module() {
        return Path.of(property("sluice.dist.root"));
    }

    /** The project's version, as the build passed it. */
    static String version() {
        return property("sluice.version");
    }

    /**
     * The environment of a host without Java: {@code PATH} a directory of links to {@link #TOOLS} alone (checked to
     * hold no {@code java}), no {@code JAVA_HOME}, nothing else inherited. {@code extra} adds variables.
     */
    static Map<String, String> noJdk(Map<String, String> extra) {
        Path tools = home().resolveSibling("no-jdk-path");
        if (!Files.isDirectory(tools)) {
            mkdirs(tools);
            for (String tool : TOOLS) {
                Path found = onBuildPath(tool)
                        .orElseThrow(() -> new IllegalStateException(
                                tool + " is not on the PATH of the build: bin/sluice needs it"));
                try {
                    Files.createSymbolicLink(tools.resolve(tool), found);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", tools.toString());
        env.putAll(extra);
        for (String dir : env.get("PATH").split(":", -1)) {
            if (Files.exists(Path.of(dir, "java"))) {
                throw new IllegalStateException("a java on the PATH of the no-JDK environment: " + dir);
            }
        }
        if (env.containsKey("JAVA_HOME")) {
            throw new IllegalStateException("JAVA_HOME in the no-JDK environment");
        }
        return env;
    }

    /** The outcome of a command run to its end. */
    record Run(int exit, String stdout, String stderr) {}

    /** Runs {@code command} to its end in exactly {@code env} (nothing inherited), within {@link #GUARD}. */
    static Run run(Map<String, String> env, List<String> command) {
        return run(env, command, Path.of("").toAbsolutePath());
    }

    /** {@link #run(Map, List)} in the working directory {@code cwd}. */
    static Run run(Map<String, String> env, List<String> command, Path cwd) {
        return run(env, command, cwd, GUARD);
    }

    /** {@link #run(Map, List, Path)} with a hang guard of its own, for a longer command (a build). */
    static Run run(Map<String, String> env, List<String> command, Path cwd, Duration guard) {
        try {
            Path out = Files.createTempFile("sluice-dist-run", ".out");
            Path err = Files.createTempFile("sluice-dist-run", ".err");
            try {
                ProcessBuilder pb = new ProcessBuilder(command)
                        .directory(cwd.toFile())
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile());
                pb.environment().clear();
                pb.environment().putAll(env);
                Process p = pb.start();
                if (!p.waitFor(guard.toSeconds(), TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(GUARD.toSeconds(), TimeUnit.SECONDS);
                    throw new AssertionError(command + " still running after " + guard);
                }
                return new Run(
                        p.exitValue(),
                        Files.readString(out, StandardCharsets.UTF_8),
                        Files.readString(err, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Where {@code tool} is on the build's own {@code PATH}, if it is. */
    static Optional<Path> onBuildPath(String tool) {
        for (String dir : System.getenv("PATH").split(":", -1)) {
            Path candidate = Path.of(dir, tool);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException(
                    name + " is not set: these tests run through Maven (./mvnw verify -pl dist -am), after the build"
                            + " made the tarball");
        }
        return value;
    }

    static void mkdirs(Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
