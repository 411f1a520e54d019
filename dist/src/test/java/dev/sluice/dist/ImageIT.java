package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.dist.Distribution.Run;
import dev.sluice.redis.RedisServer;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container image, built by {@code dist/image/build.sh} and run by podman, where podman is installed (skipped
 * elsewhere, saying why: {@code apt-get install podman runc mmdebstrap}). Its base is {@code SLUICE_IMAGE_BASE} when
 * set (say {@code debian:bookworm-slim}, where a registry can be reached), else {@code localhost/sluice-base:bookworm},
 * which {@code dist/image/debian-base.sh} makes from Debian's packages the first time (about a minute and a half),
 * since no registry can be reached from here. Run as its {@code CMD} says, with a read-only root and a {@code /tmp} of
 * its own as the Kubernetes manifests run it: it answers over HTTP and gRPC on the ports it exposes, as a user that is
 * not root, with no Java but its own, and stops cleanly on SIGTERM.
 */
class ImageIT {
    private static final String LOCAL_BASE = "localhost/sluice-base:bookworm";

    @TempDir
    Path dir;

    @Test
    void theImageServesOnItsExposedPortsAsAUserThatIsNotRootAndStopsCleanly() throws Exception {
        assumeTrue(
                Distribution.onBuildPath("podman").isPresent(),
                "podman is not installed: the image is not built (apt-get install podman runc)");
        Map<String, String> host = Map.of("PATH", System.getenv("PATH"));
        String base = System.getenv().getOrDefault("SLUICE_IMAGE_BASE", LOCAL_BASE);
        if (base.equals(LOCAL_BASE) && podman(host, "image", "exists", base).exit() != 0) {
            assumeTrue(
                    Distribution.onBuildPath("mmdebstrap").isPresent(),
                    "no " + base + " and no mmdebstrap to make it (apt-get install mmdebstrap)");
            Run made = Distribution.run(
                    host,
                    List.of(
                            Distribution.module()
                                    .resolve("image/debian-base.sh")
                                    .toString(),
                            base),
                    dir,
                    Duration.ofMinutes(10));
            assertThat(made.exit()).as("debian-base.sh: %s", made.stderr()).isZero();
        }
        String image = "localhost/sluice-it:" + Distribution.version();
        Map<String, String> build = new LinkedHashMap<>(host);
        build.put("SLUICE_BUILDER", "podman");
        build.put("SLUICE_BASE", base);
        build.put("SLUICE_IMAGE", image);
        build.put("SLUICE_BUILD_OPTS", String.join(" ", runOptions()));
        Run built = Distribution.run(
                build, List.of(Distribution.module().resolve("image/build.sh").toString()), dir, Duration.ofMinutes(5));
        assertThat(built.exit()).as("build.sh: %s", built.stderr()).isZero();

        String name = "sluice-it-" + ProcessHandle.current().pid();
        Dockerfile dockerfile = Dockerfile.read(Distribution.module().resolve("image/Dockerfile"));
        List<Integer> exposed = dockerfile.exposed();
        List<String> command = new ArrayList<>(List.of("podman", "run", "--rm", "--name", name));
        command.addAll(runOptions());
        command.addAll(List.of("--read-only", "--tmpfs", "/tmp"));
        Map<Integer, Integer> ports = new LinkedHashMap<>();
        for (int port : exposed) {
            ports.put(port, RedisServer.freePort());
            command.addAll(List.of("--publish", "127.0.0.1:" + ports.get(port) + ":" + port));
        }
        command.add(image);
        List<String> cmd = dockerfile.execForm("CMD");
        int http = ports.get(ContainerCommand.portOf(cmd, "--http"));
        try (Served s = Served.start(dir, host, command, http, "/healthcheck")) {
            assertThat(s.check("example", "user", "alice").status()).isEqualTo(200);
            int grpc = ports.get(ContainerCommand.portOf(cmd, "--grpc"));
            assertThat(Served.shouldRateLimit(grpc, "api", "remote_address", "203.0.113.7")
                            .getOverallCode())
                    .isEqualTo(RateLimitResponse.Code.OVER_LIMIT);
            assertThat(podman(host, "exec", name, "id", "-u").stdout().strip())
                    .isEqualTo(dockerfile.last("USER").split(":", -1)[0]);
            assertThat(podman(host, "exec", name, "sh", "-c", "command -v java || echo none")
                            .stdout()
                            .strip())
                    .as("a java on the image's PATH")
                    .isEqualTo("none");
            s.stopsCleanly(); // podman passes SIGTERM on to the container, and its exit code back
        } finally {
            podman(host, "rmi", "--force", image);
        }
        assertThat(Files.readString(dir.resolve("stdout.log"), StandardCharsets.UTF_8))
                .contains("sluice is serving 2 domain(s), 7 rule(s) from [/data/ratelimit/config]")
                .contains("·"); // UTF-8 (LANG=C.UTF-8), not '?'
    }

    /**
     * Options for {@code podman build} and {@code podman run} that this kind of host needs, and any other takes:
     * runc where it is installed (crun refuses a host whose cgroups mix v1 and v2), and resource limits no higher than
     * the test's own (podman's default of 1048576 open files is refused without CAP_SYS_RESOURCE).
     */
    private static List<String> runOptions() throws IOException {
        List<String> options = new ArrayList<>();
        if (Distribution.onBuildPath("runc").isPresent()) {
            options.addAll(List.of("--runtime", "runc"));
        }
        String openFiles = "1024";
        for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
            if (line.startsWith("Max open files")) {
                openFiles = line.substring("Max open files".length()).strip().split("\\s+", -1)[0];
            }
        }
        options.addAll(List.of("--ulimit", "nofile=" + openFiles + ":" + openFiles, "--ulimit", "nproc=4096:4096"));
        return options;
    }

    private static Run podman(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of("podman"));
        command.addAll(List.of(args));
        return Distribution.run(env, command);
    }
}
