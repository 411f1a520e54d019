package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dist/image/Dockerfile} read as a builder reads it, its command run on this host from the unpacked tarball as
 * the image would run it (no image is built here: {@link ImageIT} does that where podman is installed). The image
 * adds the tarball the build makes, runs as a user that is not root, and serves on every port it exposes, from all
 * interfaces, with the rules where it puts them.
 */
class DockerfileIT {
    static final String INSTALLED = "/opt/sluice";

    @TempDir
    Path dir;

    private final Dockerfile image = Dockerfile.read(Distribution.module().resolve("image/Dockerfile"));

    @Test
    void addsTheTarballTheBuildMakesAndLinksItWhereItsEntrypointIs() {
        String add = image.last("ADD");
        String tarball = add.substring(0, add.indexOf(' ')).replace("${SLUICE_VERSION}", Distribution.version());
        assertThat(tarball)
                .as("the tarball the build makes")
                .isEqualTo(Path.of(System.getProperty("sluice.dist.tarball"))
                        .getFileName()
                        .toString());
        assertThat(add).endsWith(" /opt/");
        assertThat(image.last("RUN")).contains("ln -s /opt/sluice-${SLUICE_VERSION} " + INSTALLED + " ");
        assertThat(image.execForm("ENTRYPOINT")).containsExactly(INSTALLED + "/bin/sluice");
        assertThat(image.argDefaults()).containsEntry("BASE", "debian:bookworm-slim");
    }

    @Test
    void runsAsAUserThatIsNotRoot() {
        String user = image.last("USER");
        String uid = user.split(":", -1)[0];
        assertThat(uid).isNotIn("0", "root").matches("\\d+");
        assertThat(image.last("RUN")).contains("useradd --uid " + uid + " ");
    }

    @Test
    void itsCommandServesTheRulesItHoldsOnEveryExposedPortFromAllInterfaces() throws Exception {
        List<String> command = image.command();
        String rules = command.get(command.indexOf("--config") + 1);
        // the RUN line puts the example there as config.yaml: so does this test
        assertThat(image.last("RUN"))
                .contains("cp " + INSTALLED + "/config/sluice-example.yaml " + rules + "/config.yaml");
        Path rulesHere = Files.createDirectories(dir.resolve("rules"));
        Files.copy(Distribution.home().resolve("config/sluice-example.yaml"), rulesHere.resolve("config.yaml"));

        ContainerCommand here = new ContainerCommand(new HashSet<>(image.exposed()))
                .mount(INSTALLED, Distribution.home())
                .mount(rules, rulesHere);
        List<String> local = here.localize(command);
        assertThat(here.listening())
                .as("every exposed port is listened on, on all interfaces")
                .containsExactlyInAnyOrderElementsOf(image.exposed());
        int http = here.port(ContainerCommand.portOf(command, "--http"));
        try (Served s = Served.start(dir, Distribution.noJdk(Map.of()), local, http, "/healthcheck")) {
            assertThat(s.check("example", "user", "alice").status()).isEqualTo(200);
            int grpc = here.port(ContainerCommand.portOf(command, "--grpc"));
            assertThat(Served.shouldRateLimit(grpc, "api", "remote_address", "203.0.113.7")
                            .getOverallCode())
                    .isEqualTo(RateLimitResponse.Code.OVER_LIMIT);
            s.stopsCleanly();
        }
        assertThat(Files.readString(dir.resolve("stdout.log"), StandardCharsets.UTF_8))
                .contains("7 rule(s) from [" + rulesHere + "]");
    }
}
