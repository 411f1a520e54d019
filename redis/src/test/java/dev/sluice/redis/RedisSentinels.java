package dev.sluice.redis;

import dev.sluice.tck.Eventually;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Redis Sentinel as an operator runs it, from real processes on 127.0.0.1: a master, one replica of it, and three
 * sentinels (quorum 2) that monitor it as {@link #MASTER}, with short timeouts so that a failover takes about a
 * second: a master is down after {@link #DOWN_AFTER_MILLIS} without answering. The sentinels are the same
 * {@code redis-server} binary as the servers ({@link RedisServer#binary()}), started with {@code --sentinel}, which
 * is what Debian's {@code redis-sentinel} is. {@link #close()} stops every process. Published in the test-jar, as
 * {@link RedisServer} is, for the service's tests.
 */
public final class RedisSentinels implements AutoCloseable {

    /** The name the sentinels monitor the master by: the URI's {@code #fragment}. */
    static final String MASTER = "sluice-master";

    static final int DOWN_AFTER_MILLIS = 500;
    static final int FAILOVER_TIMEOUT_MILLIS = 2000;

    final RedisServer master;
    final RedisServer replica;
    final List<Sentinel> sentinels = new ArrayList<>();

    public RedisSentinels() {
        RedisServer m = RedisServer.start();
        RedisServer r = null;
        try {
            r = RedisServer.start("--replicaof", "127.0.0.1", Integer.toString(m.port()));
            for (int i = 0; i < 3; i++) {
                sentinels.add(Sentinel.start(m.port()));
            }
            RedisServer rep = r;
            Eventually.await(
                    Duration.ofSeconds(30),
                    "three sentinels that see each other and the replica",
                    () -> sentinels.stream().allMatch(s -> {
                                String info = s.command("INFO sentinel");
                                return info.contains("status=ok")
                                        && info.contains("slaves=1")
                                        && info.contains("sentinels=3");
                            })
                            && rep.command(null, "INFO replication").contains("master_link_status:up"));
        } catch (RuntimeException | AssertionError e) {
            sentinels.forEach(Sentinel::close);
            if (r != null) {
                r.close();
            }
            m.close();
            throw e;
        }
        this.master = m;
        this.replica = r;
    }

    /** {@code redis-sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3#sluice-master}. */
    public String uri() {
        StringBuilder b = new StringBuilder("redis-sentinel://");
        for (Sentinel s : sentinels) {
            b.append(b.length() == "redis-sentinel://".length() ? "" : ",")
                    .append("127.0.0.1:")
                    .append(s.port);
        }
        return b.append('#').append(MASTER).toString();
    }

    /** The port of the master the first sentinel names ({@code SENTINEL get-master-addr-by-name}). */
    int masterPort() {
        String reply = sentinels.get(0).command("SENTINEL get-master-addr-by-name " + MASTER);
        Matcher m = Pattern.compile("\\$\\d+\\r\\n(\\d+)\\r\\n").matcher(reply);
        if (!m.find()) {
            throw new IllegalStateException("SENTINEL get-master-addr-by-name answered " + reply);
        }
        return Integer.parseInt(m.group(1));
    }

    /** Whether the replica has every write the master has: their replication offsets are equal. */
    boolean replicaCaughtUp() {
        long masterOffset = offset(master.command(null, "INFO replication"), "master_repl_offset");
        long replicaOffset = offset(replica.command(null, "INFO replication"), "slave_repl_offset");
        return masterOffset > 0 && replicaOffset == masterOffset;
    }

    private static long offset(String info, String field) {
        Matcher m = Pattern.compile(field + ":(\\d+)").matcher(info);
        if (!m.find()) {
            throw new IllegalStateException("INFO replication has no " + field + ": " + info);
        }
        return Long.parseLong(m.group(1));
    }

    @Override
    public void close() {
        sentinels.forEach(Sentinel::close);
        replica.close();
        master.close();
    }

    /** One {@code redis-server --sentinel} process, with its configuration file in a directory of its own. */
    static final class Sentinel implements AutoCloseable {
        final int port;
        private final Path dir;
        private final Process process;

        private Sentinel(int port, Path dir, Process process) {
            this.port = port;
            this.dir = dir;
            this.process = process;
        }

        static Sentinel start(int masterPort) {
            try {
                Path dir = Files.createTempDirectory("sluice-sentinel");
                int port = RedisServer.freePort();
                Path conf = dir.resolve("sentinel.conf"); // a sentinel rewrites its file: one of its own
                Files.writeString(
                        conf,
                        String.join(
                                "\n",
                                "port " + port,
                                "bind 127.0.0.1",
                                "daemonize no",
                                "dir " + dir,
                                "loglevel warning",
                                "sentinel monitor " + MASTER + " 127.0.0.1 " + masterPort + " 2",
                                "sentinel down-after-milliseconds " + MASTER + " " + DOWN_AFTER_MILLIS,
                                "sentinel failover-timeout " + MASTER + " " + FAILOVER_TIMEOUT_MILLIS,
                                "sentinel parallel-syncs " + MASTER + " 1",
                                ""));
                Process p = new ProcessBuilder(RedisServer.binary().toString(), conf.toString(), "--sentinel")
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("sentinel.log").toFile())
                        .start();
                Sentinel s = new Sentinel(port, dir, p);
                Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
                try {
                    Eventually.await(Duration.ofSeconds(10), "redis-sentinel on port " + port + " answering", () -> {
                        if (!p.isAlive()) {
                            throw new IllegalStateException(
                                    "redis-sentinel exited: " + Files.readString(dir.resolve("sentinel.log")));
                        }
                        return s.command("PING").startsWith("+PONG");
                    });
                } catch (RuntimeException | AssertionError e) {
                    s.close();
                    throw e;
                }
                return s;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /**
         * Inline commands on a connection of its own, closed for writing after them (a sentinel knows no
         * {@code QUIT}: it closes at the end of what was sent); the replies as text ("" when nothing listens).
         */
        String command(String... commands) {
            try (java.net.Socket s = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                s.setSoTimeout(2000);
                String out = String.join("\r\n", commands) + "\r\n";
                s.getOutputStream().write(out.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                s.shutdownOutput();
                return new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .map(Path::toFile)
                        .forEach(File::delete);
            } catch (IOException ignored) {
                // a temp directory left behind is harmless
            }
        }
    }
}
