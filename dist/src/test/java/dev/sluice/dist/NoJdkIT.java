package dev.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.dist.Distribution.Run;
import dev.sluice.redis.RedisServer;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tarball on a host without Java: {@code bin/sluice} run with a {@code PATH} that holds no {@code java} and no
 * {@code JAVA_HOME} ({@link Distribution#noJdk}) serves, answers over HTTP and gRPC from the runtime inside the
 * tarball, and stops cleanly on SIGTERM; its other commands and {@code SLUICE_JAVA_OPTS} work there too.
 */
class NoJdkIT {
    @TempDir
    Path dir;

    @Test
    void servesHttpAndGrpcOnTheBundledRuntimeAndStopsCleanlyOnSigterm() throws Exception {
        Path home = Distribution.home();
        int grpc = RedisServer.freePort();
        try (Served s = Served.example(dir, "--grpc", "127.0.0.1:" + grpc)) {
            assertThat(s.executable())
                    .as("the JVM that serves: the tarball's, not the host's")
                    .isEqualTo(home.resolve("runtime/bin/java"));
            assertThat(s.get("/healthcheck").body()).isEqualTo("OK");

            Served.Answer ok = s.check("example", "user", "alice");
            assertThat(ok.status()).isEqualTo(200);
            assertThat(ok.json().get("overall_code").asText()).isEqualTo("OK");
            assertThat(ok.json().at("/statuses/0/remaining").asLong())
                    .as("the example's burst of 10, one taken")
                    .isEqualTo(9);
            Served.Answer blocked = s.check("api", "remote_address", "203.0.113.7");
            assertThat(blocked.status()).isEqualTo(429);

            assertThat(Served.shouldRateLimit(grpc, "example", "user", "bob").getOverallCode())
                    .isEqualTo(RateLimitResponse.Code.OK);
            assertThat(Served.shouldRateLimit(grpc, "api", "remote_address", "203.0.113.7")
                            .getOverallCode())
                    .as("the example's blocked address, over gRPC")
                    .isEqualTo(RateLimitResponse.Code.OVER_LIMIT);

            s.stopsCleanly();
        }
        assertThat(Files.readString(dir.resolve("stdout.log"), StandardCharsets.UTF_8))
                .contains("sluice is serving 2 domain(s), 7 rule(s)");
    }

    @Test
    void printsItsVersionAndValidatesTheExampleRules() {
        Path home = Distribution.home();
        Run version = Distribution.run(
                Distribution.noJdk(Map.of()), List.of(home.resolve("bin/sluice").toString(), "--version"));
        assertThat(version.exit()).isZero();
        assertThat(version.stdout().strip()).isEqualTo("sluice " + Distribution.version());

        Run validate = Distribution.run(
                Distribution.noJdk(Map.of()),
                List.of(
                        home.resolve("bin/sluice").toString(),
                        "validate",
                        home.resolve("config/sluice-example.yaml").toString()));
        assertThat(validate.exit()).as(validate.stderr()).isZero();
        assertThat(validate.stdout()).contains("ok  domain api: 6 rules").contains("ok  domain example: 1 rules");
    }

    @Test
    void validateNamesTheLineOfABadRuleAndExitsOne() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(
                bad,
                "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n");
        Run validate = Distribution.run(
                Distribution.noJdk(Map.of()),
                List.of(Distribution.home().resolve("bin/sluice").toString(), "validate", bad.toString()));
        assertThat(validate.exit()).isEqualTo(1);
        assertThat(validate.stdout() + validate.stderr()).contains(bad + ":5").contains("fortnight");
    }

    @Test
    void passesSluiceJavaOptsToTheBundledJvmOneOptionPerWordUnexpanded() throws Exception {
        Path home = Distribution.home();
        // run where a file matches the pattern: an unquoted expansion would pass its name instead
        Files.createFile(dir.resolve("-Dsluice.probe=expanded"));
        Run run = Distribution.run(
                Distribution.noJdk(Map.of("SLUICE_JAVA_OPTS", "-XshowSettings:properties  -Dsluice.probe=*")),
                List.of(home.resolve("bin/sluice").toString(), "--version"),
                dir);
        assertThat(run.exit()).as(run.stderr()).isZero();
        assertThat(run.stderr())
                .contains("java.home = " + home.resolve("runtime"))
                .contains("sluice.probe = *");
        assertThat(run.stdout().strip()).isEqualTo("sluice " + Distribution.version());
    }

    @Test
    void runsThroughSymlinksAsFromItsOwnDirectory() throws Exception {
        Path home = Distribution.home();
        Path absolute = Files.createSymbolicLink(dir.resolve("sluice"), home.resolve("bin/sluice"));
        Path other = Files.createDirectories(dir.resolve("usr/local/bin"));
        // a relative link to the absolute one: followed twice
        Path relative = Files.createSymbolicLink(other.resolve("sluice"), other.relativize(absolute));
        for (Path link : List.of(absolute, relative)) {
            Run run = Distribution.run(Distribution.noJdk(Map.of()), List.of(link.toString(), "--version"));
            assertThat(run.exit()).as("%s: %s", link, run.stderr()).isZero();
            assertThat(run.stdout().strip()).isEqualTo("sluice " + Distribution.version());
        }
    }

    @Test
    void withoutItsRuntimeItStopsAndSaysSoEvenWithJavaOnThePath() throws Exception {
        Path home = Distribution.home();
        Path copy = Files.createDirectories(dir.resolve("incomplete/bin"));
        Files.copy(home.resolve("bin/sluice"), copy.resolve("sluice"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.createDirectories(dir.resolve("incomplete/lib"));
        Files.createSymbolicLink(
                dir.resolve("incomplete/lib/sluice-server.jar"), home.resolve("lib/sluice-server.jar"));
        // the host's PATH, with its java: the launcher must not fall back to it
        Run run = Distribution.run(
                Map.of("PATH", System.getenv("PATH"), "JAVA_HOME", System.getProperty("java.home")),
                List.of(copy.resolve("sluice").toString(), "--version"));
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.stdout()).isEmpty();
        assertThat(run.stderr())
                .contains(dir.toRealPath().resolve("incomplete/runtime/bin/java") + " is missing")
                .contains("unpack the whole tarball");
    }
}
