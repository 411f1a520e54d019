package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.RuleSet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gRPC examples of server/README.md ("Call it yourself"), run as written against a real server on the built-in
 * example rules: the {@code grpcurl} lines (server reflection, no .proto file), and the Python client
 * {@code examples/grpc-python/rls_check.py} on Python modules generated from the {@code .proto} files the build
 * extracted into {@code target/proto}.
 *
 * <p>Each runs when its tools are there and is skipped with the reason otherwise: {@code grpcurl} on the PATH; a
 * {@code python3} that imports {@code grpc} and {@code google.protobuf} (Debian's {@code python3-grpcio}, or pip's
 * {@code grpcio}) and a {@code protoc} ({@code protobuf-compiler}, or pip's {@code grpcio-tools}). {@code .ci/run}
 * installs what Debian has.
 */
class GrpcClientExamplesTest {
    static final Path README = Path.of("README.md");
    static final Path PROTOS = Path.of("target", "proto");
    static final Path PYTHON_CLIENT = Path.of("..", "examples", "grpc-python", "rls_check.py");
    /** A hang guard only: each tool answers in well under a second on a quiet machine. */
    static final long GUARD_SECONDS = 120;

    static SluiceServer server;
    static String grpc;

    @BeforeAll
    static void start() throws Exception {
        server = SluiceServer.start(
                SluiceServer.Settings.defaults(InMemoryRateLimiter.create(), RuleSet.builtinExample())
                        .withHttp(null));
        grpc = "127.0.0.1:" + server.grpcAddress().getPort();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void theReadmesGrpcurlLinesListTheServicesAndAskForADecision() throws Exception {
        Assumptions.assumeTrue(
                onPath("grpcurl"),
                "grpcurl is not on the PATH (https://github.com/fullstorydev/grpcurl;"
                        + " Debian has no package of it): skipped");
        List<String> commands = readmeCommands("grpcurl ");
        assertThat(commands).hasSize(2);
        Run list = run(List.of("bash", "-c", commands.get(0).replace("127.0.0.1:8081", grpc)), Map.of());
        assertThat(list.code).as(list.output).isZero();
        assertThat(list.output.lines())
                .contains("envoy.service.ratelimit.v3.RateLimitService", "grpc.health.v1.Health");

        Run ask = run(List.of("bash", "-c", commands.get(1).replace("127.0.0.1:8081", grpc)), Map.of());
        assertThat(ask.code).as(ask.output).isZero();
        assertThat(ask.output).contains("\"overallCode\": \"OK\"", "\"limitRemaining\": 9");
    }

    @Test
    void thePythonClientAsksAndIsAnswered(@TempDir Path generated) throws Exception {
        String python = pythonWithGrpc();
        Assumptions.assumeTrue(
                python != null,
                "no python3 that imports grpc and google.protobuf (apt-get install "
                        + "python3-grpcio, or pip install grpcio protobuf): skipped");
        List<String> protoc = onPath("protoc")
                ? List.of("protoc")
                : succeeds(List.of(python, "-c", "import grpc_tools.protoc"))
                        ? List.of(python, "-m", "grpc_tools.protoc")
                        : null;
        Assumptions.assumeTrue(
                protoc != null,
                "no protoc (apt-get install protobuf-compiler, or pip install " + "grpcio-tools): skipped");
        assertThat(PROTOS.resolve("envoy/service/ratelimit/v3/rls.proto"))
                .as("the build extracted envoy's protos")
                .isRegularFile();

        // the README's command: every envoy, udpa, validate and xds .proto file to Python modules
        List<String> compile = new ArrayList<>(protoc);
        compile.addAll(List.of("-I", ".", "--python_out=" + generated.toAbsolutePath()));
        try (var files = Files.walk(PROTOS)) {
            files.filter(f -> f.toString().endsWith(".proto"))
                    .map(f -> PROTOS.relativize(f).toString())
                    .filter(f -> f.matches("(envoy|udpa|validate|xds)/.*"))
                    .sorted()
                    .forEach(compile::add);
        }
        Run protocRun = run(compile, Map.of(), PROTOS);
        assertThat(protocRun.code).as(protocRun.output).isZero();

        Map<String, String> env =
                Map.of("PYTHONPATH", generated.toAbsolutePath().toString());
        Run ok = run(List.of(python, PYTHON_CLIENT.toString(), grpc, "example", "user=alice"), env);
        assertThat(ok.code).as(ok.output).isZero();
        assertThat(ok.output.lines()).containsExactly("OK", "  OK remaining=9 limit=2 per SECOND reset_in=1s");

        Run blocked = run(List.of(python, PYTHON_CLIENT.toString(), grpc, "api", "remote_address=203.0.113.7"), env);
        assertThat(blocked.code).as(blocked.output).isEqualTo(1);
        assertThat(blocked.output.lines())
                .containsExactly("OVER_LIMIT", "  OVER_LIMIT remaining=0 limit=0 per SECOND reset_in=1s");
    }

    /** The README's shell lines starting with {@code prefix}, continuation lines joined. */
    static List<String> readmeCommands(String prefix) throws IOException {
        List<String> out = new ArrayList<>();
        StringBuilder current = null;
        for (String line : Files.readAllLines(README, StandardCharsets.UTF_8)) {
            if (current != null) {
                current.append(' ').append(line.strip());
            } else if (line.startsWith(prefix)) {
                current = new StringBuilder(line);
            }
            if (current != null && !current.toString().endsWith("\\")) {
                out.add(stripComment(current.toString()));
                current = null;
            } else if (current != null) {
                current.setLength(current.length() - 1);
            }
        }
        return out;
    }

    private static String stripComment(String command) {
        Matcher m = Pattern.compile("\\s+#\\s[^']*$").matcher(command);
        return m.find() ? command.substring(0, m.start()) : command;
    }

    static String pythonWithGrpc() throws Exception {
        for (String candidate : List.of("python3", "/usr/bin/python3")) {
            if (succeeds(List.of(candidate, "-c", "import grpc, google.protobuf"))) {
                return candidate;
            }
        }
        return null;
    }

    static boolean onPath(String tool) throws Exception {
        return succeeds(List.of("bash", "-c", "command -v " + tool));
    }

    static boolean succeeds(List<String> command) throws Exception {
        try {
            return run(command, Map.of()).code == 0;
        } catch (IOException notThere) {
            return false;
        }
    }

    record Run(int code, String output) {}

    static Run run(List<String> command, Map<String, String> env) throws Exception {
        return run(command, env, Path.of("."));
    }

    static Run run(List<String> command, Map<String, String> env, Path dir) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(GUARD_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + " did not finish");
        }
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
