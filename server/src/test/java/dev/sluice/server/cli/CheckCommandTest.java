package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code sluice check} against a real service, and what its start-up loads. */
class CheckCommandTest {

    @Test
    void showsADenialAgainstTheExampleRulesWithTheHeadersAndTheAnswerLaidOut() throws Exception {
        try (SluiceServer server = SluiceServer.start(
                SluiceServer.Settings.defaults(InMemoryRateLimiter.create(), RuleSet.builtinExample())
                        .withGrpc(null))) {
            String url = "http://127.0.0.1:" + server.httpAddress().getPort();
            Out blocked = check("--url", url, "--domain", "api", "remote_address=203.0.113.7");
            assertThat(blocked.code).isEqualTo(1);
            assertThat(blocked.out)
                    .startsWith("HTTP 429\n")
                    .contains("\"overall_code\": \"OVER_LIMIT\",\n")
                    .contains("\n  \"statuses\": [\n    {\n      \"code\": \"OVER_LIMIT\",\n");

            Out ok = check("--url", url + "/", "-d", "example", "user=a \"quoted\" name");
            assertThat(ok.code).isZero();
            assertThat(ok.out)
                    .startsWith("HTTP 200\nRateLimit-Policy: ")
                    .contains("\nRateLimit: ")
                    .contains("\"overall_code\": \"OK\"");

            Out unreachable = check("--url", "http://127.0.0.1:1", "-d", "example", "user=a");
            assertThat(unreachable.code).isEqualTo(2);
            assertThat(unreachable.err)
                    .startsWith("sluice check: cannot reach http://127.0.0.1:1: ")
                    .contains("is 'sluice serve' running? pass --url");

            Out bad = check("--url", url, "-d", "example", "user");
            assertThat(bad.code).isEqualTo(2);
            assertThat(bad.err).contains("'user' is not KEY=VALUE");
        }
    }

    @Test
    void indentsJsonAndLeavesStringsAlone() {
        assertThat(CheckCommand.indent("{\"a\":[1,{\"b\":\"x,y:{z}\\\"\"}],\"e\":{},\"f\":[]}"))
                .isEqualTo("""
                {
                  "a": [
                    1,
                    {
                      "b": "x,y:{z}\\""
                    }
                  ],
                  "e": {},
                  "f": []
                }""");
        assertThat(CheckCommand.indent("not json")).isEqualTo("not json");
    }

    /**
     * The jar's entry point runs {@code check} without the service's classes, logback, Jackson, Netty, gRPC or
     * {@code java.net.http}: what made each call pay for a server's start-up (a JVM of its own, classes listed by
     * {@code -verbose:class}). (SLF4J's API loads, a few dozen classes: the JDK's HttpURLConnection asks the system
     * logger, which the jar bridges to SLF4J; Launcher names SLF4J a provider that logs nothing.)
     */
    @Test
    void checkLoadsNoneOfTheServer() throws Exception {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-verbose:class",
                "-cp",
                System.getProperty("java.class.path"),
                Launcher.class.getName(),
                "check",
                "--url",
                "http://127.0.0.1:1",
                "-d",
                "example",
                "user=a"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("a hang guard").isTrue();
        assertThat(p.exitValue()).as(out).isEqualTo(2);
        assertThat(out.lines().filter(l -> !l.contains("[class,load]")))
                .as("nothing said about logging")
                .noneMatch(l -> l.contains("SLF4J"));
        List<String> loaded = out.lines()
                .filter(l -> l.startsWith("[") && l.contains(" source: "))
                .map(l -> l.replaceAll("^.*\\[class,load\\] (\\S+) source.*$", "$1"))
                .toList();
        assertThat(loaded).as("classes loaded").contains(CheckCommand.class.getName(), "picocli.CommandLine");
        assertThat(loaded)
                .filteredOn(c -> (c.startsWith("dev.sluice.server.") && !c.startsWith("dev.sluice.server.cli."))
                        || c.startsWith("dev.sluice.server.cli.ServeCommand")
                        || c.startsWith("dev.sluice.server.cli.SluiceCommand")
                        || c.startsWith("ch.qos.logback.")
                        || c.startsWith("com.fasterxml.")
                        || c.startsWith("io.netty.")
                        || c.startsWith("io.grpc.")
                        || c.startsWith("java.net.http.")
                        || c.startsWith("jdk.internal.net.http."))
                .as("what check must not load")
                .isEmpty();
    }

    record Out(int code, String out, String err) {}

    static Out check(String... args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
        try {
            int code = CheckCommand.run(args);
            return new Out(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
    }
}
