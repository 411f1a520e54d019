package dev.sluice.server.stats;

import dev.sluice.Scheduler;
import dev.sluice.server.config.ConfigNames;
import dev.sluice.store.Repeat;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends {@link EnvoyStats} to a statsd collector as envoy's service does through lyft/gostats: every flush interval,
 * each counter that grew since the last flush as one line {@code name:growth|c}, over TCP (gostats' default) or UDP.
 *
 * <p>The decision path never meets the sink: decisions increment counters, and a flush, on a thread of its own
 * ({@code sluice-statsd-<n>}, on the {@link Scheduler}'s time), reads them. A flush sends what it read or drops it:
 * with the collector away (refused, unreachable, a write stalled past {@value #WRITE_TIMEOUT_MILLIS} ms) its lines are
 * counted in {@link #droppedLines()} and the counters still move on, as gostats' latch does, so nothing piles up
 * while it is away; the next flush connects again (TCP; a collector that restarted is found again). One log line
 * when the collector goes away, one when it is back, not one per flush. Memory is what the counters hold
 * ({@link EnvoyStats#MAX_KEYS}) and one flush's text.
 *
 * <p>Over TCP a flush is written at once on one connection kept between flushes; over UDP it is cut into datagrams
 * of at most {@value #UDP_PAYLOAD_BYTES} bytes at line ends (gostats' size, which a 1500-byte MTU carries whole).
 */
public final class StatsdSink implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StatsdSink.class);

    /** gostats' dial timeout. */
    static final int CONNECT_TIMEOUT_MILLIS = 1500;

    /** gostats' write deadline: a collector that takes longer to take a flush is treated as away. */
    static final int WRITE_TIMEOUT_MILLIS = 1000;

    /** gostats' UDP buffer: a datagram's payload, cut at line ends. */
    static final int UDP_PAYLOAD_BYTES = 1432;

    /** statsd's transports. */
    public enum Protocol {
        TCP,
        UDP;

        /** {@code tcp} or {@code udp}, as gostats' {@code STATSD_PROTOCOL}. */
        public static Protocol parse(String what, String s) {
            Protocol p = ConfigNames.find(values(), s);
            if (p != null) {
                return p;
            }
            throw new IllegalArgumentException(
                    what + " '" + s + "' is not a statsd protocol: write tcp (the default, as envoy's) or udp");
        }

        public String configName() {
            return ConfigNames.of(this);
        }
    }

    private final EnvoyStats stats;
    private final InetSocketAddress collector;
    private final Protocol protocol;
    private final Duration flushInterval;
    private final Scheduler scheduler;
    private final Repeat flushes;
    private final AtomicLong dropped = new AtomicLong();
    /** What each counter's total was at the last flush; guarded by {@code this}, as are the fields below. */
    private final Map<EnvoyStats.Counter, Long> flushed = new HashMap<>();

    private @Nullable SocketChannel tcp;
    private @Nullable DatagramSocket udp;
    private boolean away;

    /**
     * @param runsOn where flushes run instead of a thread of their own (tests: {@code Runnable::run}, with a
     *               {@link dev.sluice.ManualScheduler}); null: {@code sluice-statsd-<n>}
     */
    public StatsdSink(
            EnvoyStats stats,
            InetSocketAddress collector,
            Protocol protocol,
            Duration flushInterval,
            Scheduler scheduler,
            @Nullable Executor runsOn) {
        this.stats = stats;
        this.collector = collector;
        this.protocol = protocol;
        this.flushInterval = flushInterval;
        this.scheduler = scheduler;
        this.flushes = new Repeat(scheduler, "statsd", runsOn, () -> {
            flush();
            return flushInterval;
        });
        this.flushes.after(flushInterval);
    }

    public Duration flushInterval() {
        return flushInterval;
    }

    /** Lines read from the counters and not delivered: the collector was away. */
    public long droppedLines() {
        return dropped.get();
    }

    /** Sends what the counters grew by since the last flush (also what each interval does). */
    public synchronized void flush() {
        StringBuilder text = new StringBuilder();
        int lines = 0;
        for (EnvoyStats.Counter c : stats.counters()) {
            long total = c.total.sum();
            Long last = flushed.put(c, total);
            long growth = total - (last == null ? 0 : last);
            if (growth != 0) {
                text.append(c.name).append(':').append(growth).append("|c\n");
                lines++;
            }
        }
        if (lines == 0) {
            return;
        }
        try {
            send(text.toString().getBytes(StandardCharsets.UTF_8));
            if (away) {
                away = false;
                log.atInfo()
                        .addKeyValue("event", "statsd_back")
                        .addKeyValue("collector", where())
                        .addKeyValue("dropped_lines", dropped.get())
                        .log();
            }
        } catch (IOException | RuntimeException e) {
            disconnect();
            dropped.addAndGet(lines);
            if (!away) {
                away = true;
                log.atWarn()
                        .addKeyValue("event", "statsd_away")
                        .addKeyValue("collector", where())
                        .addKeyValue("reason", String.valueOf(e.getMessage()))
                        .addKeyValue("effect", "stats are dropped and counted until it answers; decisions go on")
                        .log();
            }
        }
    }

    /** The collector as the logs name it, {@code tcp://host:port}. */
    public String where() {
        return protocol.configName() + "://" + collector.getHostString() + ":" + collector.getPort();
    }

    private void send(byte[] payload) throws IOException {
        // resolved at each connection: a collector's name may point elsewhere after it restarted
        InetSocketAddress to = new InetSocketAddress(collector.getHostString(), collector.getPort());
        if (protocol == Protocol.UDP) {
            DatagramSocket s = udp;
            if (s == null) {
                s = new DatagramSocket();
                udp = s;
            }
            int start = 0;
            while (start < payload.length) {
                int end = cut(payload, start);
                s.send(new DatagramPacket(payload, start, end - start, to));
                start = end;
            }
            return;
        }
        SocketChannel ch = tcp;
        if (ch != null && !held(ch)) {
            disconnect(); // the collector closed it (it restarted): a new connection
            ch = null;
        }
        if (ch == null) {
            ch = SocketChannel.open();
            tcp = ch;
            ch.socket().connect(to, CONNECT_TIMEOUT_MILLIS);
        }
        SocketChannel stalled = ch;
        Scheduler.Cancellable deadline = scheduler.schedule(Duration.ofMillis(WRITE_TIMEOUT_MILLIS), () -> {
            try {
                stalled.close(); // a blocked write then fails: the collector is treated as away
            } catch (IOException ignored) {
                // closing is all that was wanted
            }
        });
        try {
            ByteBuffer out = ByteBuffer.wrap(payload);
            while (out.hasRemaining()) {
                ch.write(out);
            }
        } finally {
            deadline.cancel();
        }
    }

    /**
     * Whether the collector still holds the connection. A statsd collector never writes, so a read that finds the
     * end of the stream (or a reset) means it closed its side: without this look, the first flush after a restart
     * would be written into the dead connection and lost without a word.
     */
    private static boolean held(SocketChannel ch) {
        try {
            ch.configureBlocking(false);
            int n = ch.read(ByteBuffer.allocate(256));
            ch.configureBlocking(true);
            return n >= 0;
        } catch (IOException e) {
            return false;
        }
    }

    /** Where the datagram that starts at {@code start} ends: after the last whole line that fits, or one line. */
    private static int cut(byte[] payload, int start) {
        int limit = Math.min(payload.length, start + UDP_PAYLOAD_BYTES);
        if (limit == payload.length) {
            return limit;
        }
        for (int i = limit - 1; i > start; i--) {
            if (payload[i] == '\n') {
                return i + 1;
            }
        }
        int i = start;
        while (i < payload.length && payload[i] != '\n') {
            i++;
        }
        return Math.min(payload.length, i + 1); // one line longer than a datagram: sent alone
    }

    private void disconnect() {
        try {
            if (tcp != null) {
                tcp.close();
            }
        } catch (IOException ignored) {
            // already broken
        }
        tcp = null;
        if (udp != null) {
            udp.close();
        }
        udp = null;
    }

    /** Stops the flushes after a last one. */
    @Override
    public void close() {
        flushes.close(Duration.ofSeconds(2));
        flush();
        synchronized (this) {
            disconnect();
        }
    }
}
