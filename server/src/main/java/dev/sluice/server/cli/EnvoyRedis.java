package dev.sluice.server.cli;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/** The {@code --store} that envoy's Redis variables describe. */
final class EnvoyRedis {
    private EnvoyRedis() {}

    /**
     * The store of {@code BACKEND_TYPE}, {@code REDIS_SOCKET_TYPE}, {@code REDIS_TYPE}, {@code REDIS_URL},
     * {@code REDIS_AUTH} and {@code REDIS_TLS}: {@code redis[s]://[user:password@]host:port[,host:port…]}.
     */
    static @Nullable String store(EnvoyEnvironment e) {
        String backend = EnvoyEnvironment.word(e.get("BACKEND_TYPE"));
        if (backend != null && !backend.equals("redis")) {
            throw new IllegalArgumentException("BACKEND_TYPE=" + e.get("BACKEND_TYPE") + " is not supported: Sluice's "
                    + "stores are Redis, PostgreSQL and memory: set BACKEND_TYPE=redis and REDIS_URL=host:port, or "
                    + "pass --store");
        }
        String url = e.get("REDIS_URL");
        if (url == null) {
            if (e.envoyMode() || backend != null) {
                throw new IllegalArgumentException("REDIS_URL is not set: envoy's default is the unix socket "
                        + "/var/run/nutcracker/ratelimit.sock, and Sluice reaches Redis over TCP: set REDIS_URL="
                        + "host:port (REDIS_SOCKET_TYPE=tcp), or pass --store (--store memory for one instance)");
            }
            return null;
        }
        if ("unix".equals(EnvoyEnvironment.word(e.get("REDIS_SOCKET_TYPE")))) {
            throw new IllegalArgumentException("REDIS_SOCKET_TYPE=unix is not supported: Sluice reaches Redis over "
                    + "TCP: set REDIS_SOCKET_TYPE=tcp and REDIS_URL=host:port");
        }
        String type = EnvoyEnvironment.word(e.get("REDIS_TYPE"));
        if ("sentinel".equals(type)) {
            return sentinelStore(url, e.get("REDIS_AUTH"), e.bool("REDIS_TLS", false));
        }
        if (type != null && !type.equals("single") && !type.equals("cluster")) {
            throw new IllegalArgumentException(
                    "REDIS_TYPE '" + e.get("REDIS_TYPE") + "' is unknown: write single, cluster or sentinel");
        }
        if (url.startsWith("redis://") || url.startsWith("rediss://")) {
            return url;
        }
        return (e.bool("REDIS_TLS", false) ? "rediss://" : "redis://") + userInfo(e.get("REDIS_AUTH")) + url;
    }

    /**
     * {@code REDIS_TYPE=sentinel}'s store, as Lettuce writes it: {@code REDIS_URL} is envoy's
     * {@code master,host:port,host:port…}.
     */
    static String sentinelStore(String url, @Nullable String auth, boolean tls) {
        String[] parts = url.split(",", -1);
        if (parts.length < 2 || parts[0].isBlank()) {
            throw new IllegalArgumentException("REDIS_URL '" + url + "' is not envoy's sentinel form: write "
                    + "REDIS_URL=master-name,host:26379[,host:26379…]");
        }
        StringBuilder s = new StringBuilder(tls ? "rediss-sentinel://" : "redis-sentinel://").append(userInfo(auth));
        for (int i = 1; i < parts.length; i++) {
            s.append(i > 1 ? "," : "").append(parts[i].trim());
        }
        return s.append('#').append(parts[0].trim()).toString();
    }

    /** envoy's {@code REDIS_AUTH}: {@code user:password} or a password alone. */
    private static String userInfo(@Nullable String auth) {
        if (auth == null) {
            return "";
        }
        int colon = auth.indexOf(':');
        String user = colon < 0 ? "" : auth.substring(0, colon);
        String password = colon < 0 ? auth : auth.substring(colon + 1);
        return encode(user) + ":" + encode(password) + "@";
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
