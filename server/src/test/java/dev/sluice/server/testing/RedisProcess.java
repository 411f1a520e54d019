package dev.sluice.server.testing;

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
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * A real {@code redis-server} for the service's failure tests, bound to 127.0.0.1 on a free port, that can be
 * killed (SIGKILL, like a crash) and started again on the same port. The binary is the one on the PATH if there is
 * one, else the one bundled in embedded-redis's jar ({@code SLUICE_REDIS_SERVER=embedded} forces the bundled one,
 * {@code SLUICE_REDIS_SERVER=/path/to/redis-server} names another), as in the redis module's tests.
 */
public final class RedisProcess implements AutoCloseable {
    private static Path binary;

    private final int port;
    private final Path dir;
    private Process process;

    private RedisProcess(int port) throws IOException {
        this.port = port;
        this.dir = Files.createTempDirectory("sluice-server-redis-" + port);
    }

    /** A server on a free port, not started yet: {@link #uri()} names where it will listen. */
    public static RedisProcess onFreePort() {
        try {
            return new RedisProcess(freePort());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A started server on a free port. */
    public static RedisProcess start() {
        RedisProcess r = onFreePort();
        r.startProcess();
        return r;
    }

    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** Starts (again) on this port, with no data (nothing is persisted), and waits for PING. */
    public synchronized void startProcess() {
        try {
            Process p = new ProcessBuilder(List.of(binary().toString(), "--port", Integer.toString(port),
                    "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
                    "--dir", dir.toString(), "--loglevel", "warning"))
                    .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
            process = p;
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (System.nanoTime() < deadline) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("redis-server exited: " + Files.readString(dir.resolve("redis.log")));
                }
                if (ping()) {
                    return;
                }
                Thread.sleep(20);
            }
            p.destroyForcibly();
            throw new IllegalStateException("redis-server on port " + port + " did not answer PING within 10 s");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Kills the process with SIGKILL, as a crash would, and waits until it is gone. */
    public synchronized void kill() {
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
        kill();
        try (var files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // a temp directory left behind is harmless
        }
    }

    private boolean ping() {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(1000);
            s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] buf = new byte[7];
            int n = s.getInputStream().read(buf);
            return n > 0 && new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    private static synchronized Path binary() throws IOException {
        if (binary != null) {
            return binary;
        }
        String choice = System.getenv("SLUICE_REDIS_SERVER");
        if (choice != null && !choice.isBlank() && !choice.equals("embedded")) {
            return binary = Path.of(choice);
        }
        String path = "embedded".equals(choice) ? null : System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(File.pathSeparator)) {
                Path p = Path.of(d, "redis-server");
                if (Files.isExecutable(p)) {
                    return binary = p;
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
        return binary = tmp;
    }

    private static String bundledResource() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        boolean arm = arch.contains("aarch64") || arch.contains("arm");
        if (os.contains("mac")) {
            return arm ? "/redis-server-6.2.6-v5-darwin-arm64" : "/redis-server-6.2.6-v5-darwin-amd64";
        }
        return arm ? "/redis-server-6.2.7-linux-arm64" : "/redis-server-6.2.6-v5-linux-amd64";
    }

    /** A port nothing listens on right now. */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
