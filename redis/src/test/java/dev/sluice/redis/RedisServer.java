package dev.sluice.redis;

import dev.sluice.tck.Eventually;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A real {@code redis-server} process for tests, bound to 127.0.0.1 on a free port: the one on the PATH
 * if there is one, else the binary bundled in embedded-redis's jar ({@code SLUICE_REDIS_SERVER=embedded}
 * forces the bundled one, {@code SLUICE_REDIS_SERVER=/path/to/redis-server} names another). {@link #stop()} kills it; a JVM
 * shutdown hook does so too if a test forgets.
 *
 * <p>For fault injection the test owns the process and its PID: {@link #kill()} (SIGKILL, a crash),
 * {@link #pause()} / {@link #resume()} (SIGSTOP / SIGCONT: the sockets stay open and nothing answers) and
 * {@link #restart()} on the same port. {@link #close()} kills it whatever state it is in (SIGKILL also ends
 * a stopped process).
 *
 * <p>The one such helper of the build: the redis module publishes it in its test-jar, and the server's and the
 * Spring Boot starter's tests use it from there ({@code sluice-redis}, {@code <type>test-jar</type>}).
 */
public final class RedisServer implements AutoCloseable {

    private static Path binary;

    final int port;
    private final List<String> extraArgs;
    private final Path dir;
    private Process process;

    /**
     * The ports of this JVM's servers, from creation to {@link #close()}: {@link #freePort()} hands none of them out,
     * so a server killed for a test keeps its port for its restart, and "a port nothing listens on" stays so.
     */
    private static final Set<Integer> OWNED = ConcurrentHashMap.newKeySet();

    /** How many ports {@link #start} tries when other processes take them first. */
    private static final int PORT_ATTEMPTS = 5;

    private RedisServer(int port, List<String> extraArgs) throws IOException {
        this.port = port;
        this.extraArgs = extraArgs;
        this.dir = Files.createTempDirectory("sluice-redis-" + port);
        // one hook for every process this server will start: restarts must not pile up hooks
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop));
    }

    /**
     * Starts a standalone server on a free port. Another process may take that port between {@link #freePort()}
     * and the start (another build's tests on the same machine): then it starts on another port.
     */
    public static RedisServer start(String... extraArgs) {
        return start(RedisServer::onFreePort, extraArgs);
    }

    /** {@link #start(String...)} on the ports {@code servers} gives, for a test of the retry. */
    static RedisServer start(java.util.function.Function<String[], RedisServer> servers, String... extraArgs) {
        for (int attempt = 1; ; attempt++) {
            RedisServer s = servers.apply(extraArgs);
            try {
                s.startProcess();
                return s;
            } catch (PortTaken e) {
                s.close();
                if (attempt == PORT_ATTEMPTS) {
                    throw new IllegalStateException(
                            PORT_ATTEMPTS + " free ports in a row were taken before"
                                    + " redis-server could listen; the last: " + e.getMessage(),
                            e);
                }
            } catch (IOException e) {
                s.close();
                throw new UncheckedIOException(e);
            } catch (RuntimeException e) {
                s.close();
                throw e;
            }
        }
    }

    /**
     * A server on a free port, not started yet: {@link #uri()} names where it will listen, {@link #startProcess()}
     * starts it. (Its port is this JVM's from now on, but another process may still take it before the start: then
     * {@link #startProcess()} throws {@link PortTaken}.)
     */
    public static RedisServer onFreePort(String... extraArgs) {
        try {
            return onPort(freePort(), extraArgs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A server on {@code port}, not started yet. */
    static RedisServer onPort(int port, String... extraArgs) {
        OWNED.add(port);
        try {
            return new RedisServer(port, List.of(extraArgs));
        } catch (IOException e) {
            OWNED.remove(port);
            throw new UncheckedIOException(e);
        }
    }

    /** The port was another process's when this server started: it could not listen there. */
    public static final class PortTaken extends IllegalStateException {
        PortTaken(String message) {
            super(message);
        }
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /**
     * The budget of tests that are not about faults: generous, so that a loaded machine does not fail them
     * (the default 10 ms is for production; RedisFaultInjectionTest measures it).
     */
    static final java.time.Duration GENEROUS_BUDGET = java.time.Duration.ofSeconds(2);

    /** A limiter builder for this server with {@link #GENEROUS_BUDGET} and as generous a connect timeout. */
    RedisRateLimiter.Builder limiter() {
        return RedisRateLimiter.builder(uri()).timeBudget(GENEROUS_BUDGET).connectTimeout(GENEROUS_CONNECT);
    }

    /** The connect timeout of tests that are not about faults (the default 2 s was seen to expire at load 25). */
    static final java.time.Duration GENEROUS_CONNECT = java.time.Duration.ofSeconds(10);

    /** Starts (again) on this port, with no data (nothing is persisted), and waits for PING. */
    public synchronized void startProcess() throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                binary().toString(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                dir.toString(),
                "--loglevel",
                "warning"));
        cmd.addAll(extraArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile());
        process = pb.start();
        Process p = process;
        try {
            Eventually.await(Duration.ofSeconds(10), "redis-server on port " + port + " answering PING", () -> {
                if (!p.isAlive()) {
                    String log = Files.readString(dir.resolve("redis.log"));
                    if (log.contains("Address already in use")) { // the port, or a cluster node's bus port (+10000)
                        throw new PortTaken("port " + port + " is taken: " + log);
                    }
                    throw new IllegalStateException("redis-server exited: " + log);
                }
                if (!ping()) {
                    return false;
                }
                long answering = answeringPid();
                if (answering != p.pid()) {
                    // another server took the port between freePort() and this start: ours cannot bind
                    p.destroyForcibly();
                    throw new PortTaken("port " + port + " is another redis-server's (pid " + answering
                            + "), not this one's (pid " + p.pid() + ")");
                }
                return true;
            });
        } catch (AssertionError e) {
            if (e.getCause() instanceof RuntimeException thrown) {
                throw thrown; // PortTaken: the caller tries another port
            }
            p.destroyForcibly();
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** The PID of the running process. */
    public synchronized long pid() {
        if (process == null) {
            throw new IllegalStateException("redis-server on port " + port + " is not running");
        }
        return process.pid();
    }

    /** SIGKILL, like a crash: every connection is reset, state and loaded scripts are gone. */
    public void kill() {
        stop();
    }

    /** SIGSTOP: the process freezes; its sockets stay open, the kernel still accepts, nothing answers. */
    public void pause() {
        signal("STOP");
    }

    /** SIGCONT after {@link #pause()}: Redis runs again and answers what was sent meanwhile. */
    public void resume() {
        signal("CONT");
    }

    /** Starts a new process on the same port, after {@link #kill()}. */
    public void restart() {
        try {
            startProcess();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void signal(String name) {
        long pid = pid();
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            if (!kill.waitFor(5, java.util.concurrent.TimeUnit.SECONDS) || kill.exitValue() != 0) {
                kill.destroyForcibly();
                throw new IllegalStateException("kill -" + name + " " + pid + " failed: "
                        + new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * How many clients are connected, not counting the one asking: {@code CLIENT LIST} on a connection
     * of its own, opened and closed for this question.
     */
    public int connectedClients() {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(2000);
            s.getOutputStream().write("CLIENT LIST\r\n".getBytes(StandardCharsets.US_ASCII));
            java.io.DataInputStream in =
                    new java.io.DataInputStream(new java.io.BufferedInputStream(s.getInputStream()));
            StringBuilder header = new StringBuilder();
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new IOException("connection closed before CLIENT LIST's reply");
                }
                header.append((char) c);
            }
            String h = header.toString().trim();
            if (!h.startsWith("$")) {
                throw new IllegalStateException("CLIENT LIST answered " + h);
            }
            byte[] body = new byte[Integer.parseInt(h.substring(1))];
            in.readFully(body);
            long lines = new String(body, StandardCharsets.UTF_8)
                    .lines()
                    .filter(l -> !l.isBlank())
                    .count();
            return (int) lines - 1;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Sends inline commands on a connection of its own (after {@code AUTH password} unless it is null) and returns
     * Redis's replies as text, e.g. {@code command(null, "CONFIG SET requirepass s3cret")}.
     */
    public String command(String password, String... commands) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(2000);
            StringBuilder out = new StringBuilder(password == null ? "" : "AUTH " + password + "\r\n");
            for (String c : commands) {
                out.append(c).append("\r\n");
            }
            out.append("QUIT\r\n");
            s.getOutputStream().write(out.toString().getBytes(StandardCharsets.UTF_8));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The process_id of the redis-server that answers on this port ({@code INFO server}, after AUTH when needed). */
    private long answeringPid() {
        int i = extraArgs.indexOf("--requirepass");
        String info = command(i >= 0 && i + 1 < extraArgs.size() ? extraArgs.get(i + 1) : null, "INFO server");
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("process_id:(\\d+)").matcher(info);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /** How many connections this server accepted since it started ({@code INFO stats}), this question's included. */
    public long connectionsReceived(String password) {
        String info = command(password, "INFO stats");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("total_connections_received:(\\d+)")
                .matcher(info);
        if (!m.find()) {
            throw new IllegalStateException("INFO stats answered " + info);
        }
        return Long.parseLong(m.group(1));
    }

    /** Kills the process (SIGKILL: like a crash) and waits for it. */
    public synchronized void stop() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }

    @Override
    public void close() {
        stop();
        OWNED.remove(port);
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // a temp directory left behind is harmless
        }
    }

    public Path dir() {
        return dir;
    }

    private boolean ping() {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(1000);
            s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] buf = new byte[7];
            int n = s.getInputStream().read(buf);
            String reply = n > 0 ? new String(buf, 0, n, StandardCharsets.US_ASCII) : "";
            return reply.startsWith("+PONG") || reply.startsWith("-NOAUTH"); // up, with --requirepass
        } catch (IOException e) {
            return false;
        }
    }

    static synchronized Path binary() throws IOException {
        if (binary != null) {
            return binary;
        }
        // SLUICE_REDIS_SERVER=embedded forces the bundled binary; a path names a redis-server to use
        String choice = System.getenv("SLUICE_REDIS_SERVER");
        if (choice != null && !choice.isBlank() && !choice.equals("embedded")) {
            System.out.println("tests use " + choice);
            binary = Path.of(choice);
            return binary;
        }
        String path = "embedded".equals(choice) ? null : System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(File.pathSeparator, -1)) {
                Path p = Path.of(d, "redis-server");
                if (Files.isExecutable(p)) {
                    System.out.println("tests use " + p);
                    binary = p;
                    return binary;
                }
            }
        }
        String resource = bundledResource();
        Path tmp = Files.createTempFile("sluice-redis-server", "");
        try (InputStream in = redis.embedded.RedisServer.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("no redis-server on the PATH and embedded-redis has no " + resource);
            }
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
        }
        tmp.toFile().setExecutable(true);
        tmp.toFile().deleteOnExit();
        System.out.println("tests use embedded-redis's " + resource);
        binary = tmp;
        return binary;
    }

    private static String bundledResource() {
        String os = System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(java.util.Locale.ROOT);
        if (os.contains("mac")) {
            return arch.contains("aarch64") || arch.contains("arm")
                    ? "/redis-server-6.2.6-v5-darwin-arm64"
                    : "/redis-server-6.2.6-v5-darwin-amd64";
        }
        if (arch.contains("aarch64") || arch.contains("arm")) {
            return "/redis-server-6.2.7-linux-arm64";
        }
        return "/redis-server-6.2.6-v5-linux-amd64";
    }

    /** A port nothing listens on right now, and none of this JVM's servers' (one may be down for a restart). */
    public static int freePort() throws IOException {
        while (true) {
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                if (!OWNED.contains(s.getLocalPort())) {
                    return s.getLocalPort();
                }
            }
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A connection of bytes to this server, for what a test reads past the limiter (keys, TTLs, INFO). */
    public Raw raw() {
        return new Raw(uri());
    }

    /** A client and its one connection of bytes; closing it closes both. */
    public static final class Raw implements AutoCloseable {
        private final RedisClient client;
        private final StatefulRedisConnection<byte[], byte[]> connection;

        private Raw(String uri) {
            client = RedisClient.create(uri);
            connection = client.connect(ByteArrayCodec.INSTANCE);
        }

        public RedisCommands<byte[], byte[]> sync() {
            return connection.sync();
        }

        @Override
        public void close() {
            connection.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }

    /** One standalone server shared by every test class of the run. */
    public static synchronized RedisServer shared() {
        if (Shared.server == null) {
            Shared.server = start();
            Runtime.getRuntime().addShutdownHook(new Thread(Shared.server::close));
        }
        return Shared.server;
    }

    private static final class Shared {
        static RedisServer server;
    }
}
