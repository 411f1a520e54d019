package dev.sluice.redis;

import dev.sluice.tck.Eventually;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

/**
 * A real Redis Cluster of three masters, built from three {@code redis-server} processes: cluster mode on,
 * slots 0–5460, 5461–10922 and 10923–16383 assigned with {@code CLUSTER ADDSLOTS}, the nodes introduced
 * with {@code CLUSTER MEET}. One is shared by the test classes of a run and stopped at JVM exit.
 */
final class RedisCluster implements AutoCloseable {

    static final int[][] RANGES = {{0, 5460}, {5461, 10922}, {10923, 16383}};

    final List<RedisServer> nodes = new ArrayList<>();
    final List<RedisCommands<byte[], byte[]>> admin = new ArrayList<>();
    private final List<RedisClient> clients = new ArrayList<>();

    private RedisCluster() {
        for (int i = 0; i < 3; i++) {
            RedisServer s = RedisServer.start(
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "5000");
            nodes.add(s);
            RedisClient c = RedisClient.create(s.uri());
            clients.add(c);
            admin.add(c.connect(ByteArrayCodec.INSTANCE).sync());
            admin.get(i)
                    .clusterAddSlots(
                            IntStream.rangeClosed(RANGES[i][0], RANGES[i][1]).toArray());
        }
        for (int i = 1; i < 3; i++) {
            admin.get(0).clusterMeet("127.0.0.1", nodes.get(i).port);
        }
        try {
            Eventually.await(
                    Duration.ofSeconds(30),
                    "the cluster formed",
                    () -> admin.stream()
                            .allMatch(a -> a.clusterInfo().contains("cluster_state:ok")
                                    && a.clusterInfo().contains("cluster_known_nodes:3")));
        } catch (AssertionError e) {
            String info = admin.get(0).clusterInfo();
            close();
            throw new IllegalStateException("the cluster did not form: " + info, e);
        }
    }

    /** The address of one master: enough for the limiter to find the others. */
    String uri() {
        return nodes.get(0).uri();
    }

    /** Which master (0, 1, 2) holds a slot, as the test assigned them (until a test moves one). */
    static int masterOf(int slot) {
        return slot <= RANGES[0][1] ? 0 : slot <= RANGES[1][1] ? 1 : 2;
    }

    @Override
    public void close() {
        clients.forEach(c -> c.shutdown(Duration.ZERO, Duration.ofSeconds(1)));
        nodes.forEach(RedisServer::close);
    }

    static synchronized RedisCluster shared() {
        if (Shared.cluster == null) {
            Shared.cluster = new RedisCluster();
            Runtime.getRuntime().addShutdownHook(new Thread(Shared.cluster::close));
        }
        return Shared.cluster;
    }

    private static final class Shared {
        static RedisCluster cluster;
    }
}
