package dev.sluice.distribution;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A new Maven project outside Sluice's build (the fixture in src/test/consumer), built by this build's Maven with
 * an empty local repository of its own. It sees two repositories and nothing else: the staging repository, and as
 * a mirror of every other repository (Maven Central included) this build's local repository less its dev/sluice
 * directory, so third-party artifacts and plugins come without a download and no Sluice artifact that an earlier
 * {@code install} left in ~/.m2 can stand in for a deployed one.
 */
final class ConsumerProject {
    /** The repository id under which the staging repository is offered, recorded by Maven for what it resolved. */
    static final String STAGING_ID = "sluice-staging";

    /** Hang guards, far above the few seconds each takes: a consumer build, and one run of its main. */
    private static final long BUILD_GUARD_MINUTES = 5;

    private static final long RUN_GUARD_MINUTES = 1;

    final Path dir;
    final Path localRepository;
    private final Path work;

    private ConsumerProject(Path work) {
        this.work = work.toAbsolutePath();
        this.dir = this.work.resolve("project");
        this.localRepository = this.work.resolve("local-repository");
    }

    /**
     * Copies the fixture to {@code work} (emptied first) and fills its markers: {@code replacements} maps each
     * marker (such as {@code @@README_BOM@@}) to its text.
     */
    static ConsumerProject prepare(Path fixture, Path work, Map<String, String> replacements) throws IOException {
        ConsumerProject project = new ConsumerProject(work);
        deleteRecursively(project.work);
        try (Stream<Path> files = Files.walk(fixture)) {
            for (Path from : (Iterable<Path>) files::iterator) {
                Path to = project.dir.resolve(fixture.relativize(from).toString());
                if (Files.isDirectory(from)) {
                    Files.createDirectories(to);
                } else if (from.getFileName().toString().equals("pom.xml")) {
                    String pom = Files.readString(from);
                    for (Map.Entry<String, String> r : replacements.entrySet()) {
                        pom = pom.replace(r.getKey(), r.getValue());
                    }
                    Files.writeString(to, pom);
                } else {
                    Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        // the project's own root for Maven, so that it looks no further up for a .mvn directory (Sluice's)
        Files.createDirectories(project.dir.resolve(".mvn"));
        Files.createDirectories(project.localRepository);
        return project;
    }

    /**
     * Runs {@code mvn -fae package} on the project; returns Maven's exit code. Its output is in {@link #buildLog}.
     */
    int build(StagingRepository staging) throws IOException, InterruptedException {
        Path home = Path.of(Build.property("sluice.local.repository"));
        Path view = homeWithoutSluice(home, work.resolve("home-without-sluice"));
        Path settings = work.resolve("settings.xml");
        Files.writeString(settings, settings(staging.root(), view));
        Path mvn = Path.of(Build.property("sluice.maven.home"), "bin", "mvn");
        ProcessBuilder pb = new ProcessBuilder(
                        mvn.toString(),
                        "-B",
                        "-fae",
                        "-s",
                        settings.toString(),
                        "-Dmaven.repo.local=" + localRepository,
                        "-f",
                        dir.resolve("pom.xml").toString(),
                        "package")
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(buildLog().toFile());
        Map<String, String> env = pb.environment();
        env.put("JAVA_HOME", System.getProperty("java.home"));
        env.put("MAVEN_SKIP_RC", "true");
        env.remove("MAVEN_ARGS");
        env.remove("MAVEN_OPTS");
        return waitFor(pb.start(), BUILD_GUARD_MINUTES, "the consumer build");
    }

    Path buildLog() {
        return work.resolve("build.log");
    }

    /** The consumer module's jar, as its build left it (it may be missing when the build failed). */
    Path jar(String module) {
        return dir.resolve(module).resolve("target").resolve(module + "-1.jar");
    }

    /** Runs {@code java -jar} on the module's jar; returns what it printed (stdout and stderr) and its exit code. */
    String run(String module) throws IOException, InterruptedException {
        Path out = work.resolve(module + ".out");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-jar", jar(module).toString())
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        int exit = waitFor(p, RUN_GUARD_MINUTES, "java -jar " + jar(module));
        return Files.readString(out, StandardCharsets.UTF_8) + "exit " + exit + "\n";
    }

    private static int waitFor(Process p, long minutes, String what) throws InterruptedException {
        if (!p.waitFor(minutes, TimeUnit.MINUTES)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError(what + " did not end within " + minutes + " min");
        }
        return p.exitValue();
    }

    private static String settings(Path staging, Path view) {
        return """
                <settings>
                  <mirrors>
                    <mirror>
                      <id>sluice-build-local-repository</id>
                      <mirrorOf>*,!%1$s</mirrorOf>
                      <url>%3$s</url>
                    </mirror>
                  </mirrors>
                  <profiles>
                    <profile>
                      <id>staging</id>
                      <repositories>
                        <repository>
                          <id>%1$s</id>
                          <url>%2$s</url>
                          <snapshots><enabled>true</enabled></snapshots>
                        </repository>
                      </repositories>
                    </profile>
                  </profiles>
                  <activeProfiles>
                    <activeProfile>staging</activeProfile>
                  </activeProfiles>
                </settings>
                """.formatted(STAGING_ID, staging.toUri(), view.toUri());
    }

    /**
     * A view of the local repository {@code home} made of symbolic links, with everything but dev/sluice: the
     * third-party artifacts without copying them, and no Sluice artifact at all.
     */
    static Path homeWithoutSluice(Path home, Path view) throws IOException {
        deleteRecursively(view);
        Files.createDirectories(view);
        try (Stream<Path> top = Files.list(home)) {
            for (Path entry : (Iterable<Path>) top::iterator) {
                String name = entry.getFileName().toString();
                if (!name.equals("dev")) {
                    Files.createSymbolicLink(view.resolve(name), entry);
                    continue;
                }
                Path dev = Files.createDirectories(view.resolve("dev"));
                try (Stream<Path> groups = Files.list(entry)) {
                    for (Path group : (Iterable<Path>) groups::iterator) {
                        if (!group.getFileName().toString().equals("sluice")) {
                            Files.createSymbolicLink(
                                    dev.resolve(group.getFileName().toString()), group);
                        }
                    }
                }
            }
        }
        return view;
    }

    /** Deletes {@code dir} and what it holds, without following symbolic links. */
    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
