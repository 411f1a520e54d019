package dev.sluice.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on 127.0.0.1 in front of a test Redis. Once {@link #cutNextEvalsha()} is armed, the next
 * connection that sends an {@code EVALSHA} has it forwarded to Redis; when Redis's reply arrives (so
 * Redis has run the script) the reply is dropped and both sockets are closed, as a network that fails
 * between the request and the reply would. Later connections are forwarded untouched.
 * {@link #delay(String, long)} holds back requests of one command, as a slow network or Redis would.
 */
final class CuttingProxy implements AutoCloseable {

    private static final byte[] EVALSHA = "EVALSHA".getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket server;
    private final int target;
    private final AtomicBoolean armed = new AtomicBoolean();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger cuts = new AtomicInteger();
    private final java.util.Map<String, Long> delays = new java.util.concurrent.ConcurrentHashMap<>();

    CuttingProxy(int targetPort) throws IOException {
        this.target = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::acceptLoop, "cutting-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    String uri() {
        return "redis://127.0.0.1:" + server.getLocalPort();
    }

    void cutNextEvalsha() {
        armed.set(true);
    }

    /** Holds every request of {@code command} (e.g. {@code EVAL}) back for {@code millis} before forwarding it. */
    void delay(String command, long millis) {
        delays.put("$" + command.length() + "\r\n" + command + "\r\n", millis);
    }

    /** How many replies were cut off so far. */
    int cuts() {
        return cuts.get();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(client);
                sockets.add(upstream);
                AtomicBoolean cutThis = new AtomicBoolean();
                start(() -> pump(client, upstream, cutThis, true));
                start(() -> pump(upstream, client, cutThis, false));
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void start(Runnable r) {
        Thread t = new Thread(r, "cutting-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void pump(Socket from, Socket to, AtomicBoolean cutThis, boolean request) {
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (request && contains(buf, n, EVALSHA) && armed.compareAndSet(true, false)) {
                    cutThis.set(true);
                }
                if (request) {
                    for (var d : delays.entrySet()) {
                        if (contains(buf, n, d.getKey().getBytes(StandardCharsets.US_ASCII))) {
                            RedisServer.sleep(d.getValue());
                        }
                    }
                }
                if (!request && cutThis.get()) {
                    // Redis has answered, so it has run the script: drop the reply and the connection
                    cuts.incrementAndGet();
                    closeQuietly(from);
                    closeQuietly(to);
                    return;
                }
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the other side closed
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static boolean contains(byte[] buf, int n, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= n; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (buf[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
