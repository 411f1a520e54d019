package dev.sluice.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.protocol.RedisCommand;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The limiter's one Lettuce connection, to a single Redis or a Redis Cluster (asked with {@code INFO cluster} when
 * the URI does not say), with the options a rate limiter needs: reconnection within 100 ms of Redis's return,
 * nothing ever re-sent after a reconnect (a decision is applied at most once), commands to a single Redis rejected
 * at once while it is disconnected, the cluster's topology refreshed on every trigger. It owns the client resources
 * it created and shuts them down with itself.
 */
final class RedisConnection implements AutoCloseable {

    /**
     * Longest wait between two reconnection attempts of the limiter's own client resources (Lettuce's
     * default grows to 30 s, which would keep a restarted Redis unused for that long). Attempts start 1 ms
     * after a connection drops and double up to this.
     */
    static final Duration MAX_RECONNECT_DELAY = Duration.ofMillis(100);

    final AbstractRedisClient client;
    final StatefulConnection<byte[], byte[]> connection;
    final RedisScriptingAsyncCommands<byte[], byte[]> scripting;
    final RedisKeyAsyncCommands<byte[], byte[]> keyCommands;
    final boolean cluster;
    /** The client resources this connection created (and shuts down), or null when the user gave them. */
    private final @Nullable ClientResources ownResources;

    private RedisConnection(
            AbstractRedisClient client,
            StatefulConnection<byte[], byte[]> connection,
            RedisScriptingAsyncCommands<byte[], byte[]> scripting,
            RedisKeyAsyncCommands<byte[], byte[]> keyCommands,
            boolean cluster,
            @Nullable ClientResources ownResources) {
        this.client = client;
        this.connection = connection;
        this.scripting = scripting;
        this.keyCommands = keyCommands;
        this.cluster = cluster;
        this.ownResources = ownResources;
    }

    /**
     * Connects to {@code uris} ({@code rawUri} as given, only to hide its password in messages), as a cluster when
     * {@code clusterHint} says so or Redis does, within {@code connectTimeout}.
     *
     * @param given the caller's client resources, or null to create (and own) them
     */
    static RedisConnection open(
            String rawUri,
            List<RedisURI> uris,
            String where,
            @Nullable Boolean clusterHint,
            @Nullable ClientResources given,
            Duration connectTimeout,
            ReconnectWatch watch) {
        ClientResources resources = given != null
                ? given
                : DefaultClientResources.builder().reconnectDelay(watch).build();
        ClientResources own = given != null ? null : resources; // created here: shut down with the connection
        boolean useCluster;
        try {
            useCluster = clusterHint != null
                    ? clusterHint
                    : (uris.size() > 1 || isCluster(uris.get(0), resources, connectTimeout, rawUri, uris, where));
        } catch (RuntimeException e) {
            shutdown(own);
            throw e;
        }
        SocketOptions socket =
                SocketOptions.builder().connectTimeout(connectTimeout).build();
        // Lettuce's own command timeout is only a backstop (its timer ticks coarsely): every call's budget is
        // enforced by the limiter, precisely. It also bounds the commands of create(): SCRIPT LOAD, INFO
        TimeoutOptions timeouts = TimeoutOptions.enabled(connectTimeout);
        try {
            if (useCluster) {
                RedisClusterClient c = RedisClusterClient.create(resources, uris);
                // Cluster: keep DisconnectedBehavior.DEFAULT. REJECT_COMMANDS would also fail commands to a
                // node whose connection is still being opened (first use, MOVED/ASK to a new node); a command
                // written to a node that is down goes through the replay filter and fails at once anyway
                ClusterClientOptions.Builder options = ClusterClientOptions.builder()
                        .socketOptions(socket)
                        .timeoutOptions(timeouts)
                        // adaptive topology refresh on every trigger (MOVED, ASK, reconnects, an unknown node):
                        // Lettuce 7's default, whose enabling methods it deprecates
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.create());
                options.replayFilter(RedisConnection::neverReplay); // inherited: returns the base builder type
                c.setOptions(options.build());
                StatefulRedisClusterConnection<byte[], byte[]> conn;
                try {
                    conn = c.connect(ByteArrayCodec.INSTANCE);
                } catch (RuntimeException e) {
                    abandon(c, own);
                    throw e;
                }
                return new RedisConnection(c, conn, conn.async(), conn.async(), true, own);
            }
            RedisClient c = RedisClient.create(resources);
            c.setOptions(ClientOptions.builder()
                    .socketOptions(socket)
                    .timeoutOptions(timeouts)
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .replayFilter(RedisConnection::neverReplay)
                    .build());
            StatefulRedisConnection<byte[], byte[]> conn;
            try {
                conn = c.connect(ByteArrayCodec.INSTANCE, uris.get(0));
            } catch (RuntimeException e) {
                abandon(c, own);
                throw e;
            }
            return new RedisConnection(c, conn, conn.async(), conn.async(), false, own);
        } catch (RedisException e) {
            throw RedisFailures.cannotConnect(e, rawUri, uris, where, connectTimeout);
        }
    }

    /** Starts watching this connection's reconnections, when the limiter made its client resources. */
    RedisConnection watchedBy(ReconnectWatch watch) {
        if (ownResources != null) {
            watch.watch(ownResources);
        }
        return this;
    }

    @Override
    public void close() {
        try {
            connection.close();
        } finally {
            try {
                // a cluster client may still be refreshing its topology (after a MOVED): give it a moment
                client.shutdown(cluster ? Duration.ofMillis(100) : Duration.ZERO, Duration.ofSeconds(2));
            } finally {
                shutdown(ownResources);
            }
        }
    }

    /**
     * Lettuce's replay filter, which it asks about every command it would otherwise re-send after a
     * reconnect (those written but not answered when the connection dropped, and those buffered while it
     * was down): a decision is not idempotent, so none is ever re-sent. Lettuce drops a filtered command
     * without completing it; failing it here ends the caller's wait at once instead of at the timeout.
     */
    private static boolean neverReplay(RedisCommand<?, ?, ?> command) {
        command.completeExceptionally(new ConnectionLost());
        return true;
    }

    /** A command that the connection lost: Redis may or may not have run it; it is not re-sent. */
    static final class ConnectionLost extends RedisException {
        ConnectionLost() {
            super("connection lost before Redis answered; not re-sent");
        }
    }

    private static void abandon(AbstractRedisClient c, @Nullable ClientResources own) {
        try {
            c.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        } finally {
            shutdown(own);
        }
    }

    /**
     * Stops the event loops and timers this connection created, and waits for their threads to end (an
     * interrupted caller does not wait, but the shutdown is under way).
     */
    private static void shutdown(@Nullable ClientResources own) {
        if (own == null) {
            return;
        }
        try {
            own.shutdown(0, 2, TimeUnit.SECONDS).get(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // closing: threads that outlive the timeout end on their own
        }
    }

    private static boolean isCluster(
            RedisURI uri,
            ClientResources resources,
            Duration connectTimeout,
            String rawUri,
            List<RedisURI> uris,
            String where) {
        RedisClient probe = RedisClient.create(resources);
        probe.setOptions(ClientOptions.builder()
                .socketOptions(
                        SocketOptions.builder().connectTimeout(connectTimeout).build())
                .timeoutOptions(TimeoutOptions.enabled(connectTimeout))
                .build());
        try (StatefulRedisConnection<String, String> c = probe.connect(uri)) {
            return c.sync().info("cluster").contains("cluster_enabled:1");
        } catch (RedisException e) {
            throw RedisFailures.cannotConnect(e, rawUri, uris, where, connectTimeout);
        } finally {
            probe.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        }
    }
}
