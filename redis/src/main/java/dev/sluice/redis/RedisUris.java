package dev.sluice.redis;

import io.lettuce.core.RedisURI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Redis URIs as the limiter takes them, and as it shows them: parsed into Lettuce's {@link RedisURI}s (several
 * comma-separated hosts for a cluster), and never echoed with a password, neither the URI itself nor Lettuce's
 * messages about it, which may quote it.
 */
final class RedisUris {
    private RedisUris() {}

    /**
     * The address for messages and {@link RedisRateLimiter#toString()}: scheme, hosts and ports from the parsed URIs only,
     * so no user name, password or other option of the URI is ever echoed.
     */
    static String describe(List<RedisURI> uris) {
        StringBuilder out = new StringBuilder();
        for (RedisURI u : uris) {
            if (isSentinel(u)) {
                return describeSentinels(u);
            }
            if (u.getSocket() != null) {
                out.append(out.length() == 0 ? "redis-socket://" : ",").append(u.getSocket());
                continue;
            }
            out.append(out.length() == 0 ? (u.isSsl() ? "rediss://" : "redis://") : ",");
            String host = u.getHost();
            out.append(host != null && host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host)
                    .append(':')
                    .append(u.getPort());
        }
        return out.toString();
    }

    /** True for a {@code redis-sentinel://} URI: its hosts are sentinels, which name the master. */
    static boolean isSentinel(RedisURI u) {
        return !u.getSentinels().isEmpty();
    }

    /** {@code redis-sentinel://h1:26379,h2:26379#master}: the sentinels and the master's name, nothing secret. */
    private static String describeSentinels(RedisURI u) {
        java.util.StringJoiner hosts = new java.util.StringJoiner(
                ",", u.isSsl() ? "rediss-sentinel://" : "redis-sentinel://", "#" + u.getSentinelMasterId());
        for (RedisURI s : u.getSentinels()) {
            hosts.add(s.getHost() + ":" + s.getPort());
        }
        return hosts.toString();
    }

    /** A URI for an error message about the URI itself: whatever precedes the last {@code @} is hidden. */
    static String redact(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.lastIndexOf('@');
        if (at < 0) {
            return uri;
        }
        return (scheme >= 0 && scheme < at ? uri.substring(0, scheme + 3) : "") + "***" + uri.substring(at);
    }

    /** Lettuce's own message about a URI, with the URI's user info (raw and decoded) hidden. */
    static String scrub(@Nullable String message, String userInfo) {
        String m = String.valueOf(message);
        if (userInfo.isEmpty()) {
            return m;
        }
        List<String> secrets = new ArrayList<>(List.of(userInfo));
        secrets.addAll(List.of(userInfo.split(":")));
        for (String raw : List.copyOf(secrets)) {
            try {
                secrets.add(URLDecoder.decode(raw, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException ignored) {
                // not valid percent-encoding: the raw form is hidden anyway
            }
        }
        secrets.sort((x, y) -> y.length() - x.length()); // longest first, so no part of a secret survives
        for (String secret : secrets) {
            if (!secret.isEmpty()) {
                m = m.replace(secret, "***");
            }
        }
        return m;
    }

    /** The user info of a URI (what precedes the last {@code @} after the scheme), or "". */
    static String userInfo(String uri) {
        int scheme = uri.indexOf("://");
        String rest = scheme >= 0 ? uri.substring(scheme + 3) : uri;
        int at = rest.lastIndexOf('@');
        return at >= 0 ? rest.substring(0, at) : "";
    }

    static List<RedisURI> parse(String uri, Duration timeout) {
        Objects.requireNonNull(uri, "redisUri must not be null: e.g. \"redis://localhost:6379\"");
        int scheme = uri.indexOf("://");
        if (scheme < 0) {
            throw new IllegalArgumentException("redisUri \"" + redact(uri) + "\" has no scheme: use redis://host:port"
                    + " (or rediss:// for TLS)");
        }
        String head = uri.substring(0, scheme + 3);
        if (head.equals("redis-sentinel://") || head.equals("rediss-sentinel://")) {
            return List.of(sentinel(uri, timeout));
        }
        String rest = uri.substring(scheme + 3);
        int at = rest.lastIndexOf('@');
        String auth = at >= 0 ? rest.substring(0, at + 1) : "";
        String userInfo = at >= 0 ? rest.substring(0, at) : "";
        String hosts = at >= 0 ? rest.substring(at + 1) : rest;
        int slash = hosts.indexOf('/');
        String tail = slash >= 0 ? hosts.substring(slash) : "";
        hosts = slash >= 0 ? hosts.substring(0, slash) : hosts;
        List<RedisURI> out = new ArrayList<>();
        for (String h : hosts.split(",", -1)) {
            if (h.isBlank()) {
                continue;
            }
            try {
                RedisURI u = RedisURI.create(head + auth + h.trim() + tail);
                u.setTimeout(timeout);
                out.add(u);
            } catch (IllegalArgumentException e) {
                // neither the URI nor Lettuce's message (which may quote it) is echoed with its password;
                // nor is the cause, whose message may
                throw new IllegalArgumentException("redisUri \"" + redact(uri) + "\" is not a Redis URI ("
                        + scrub(e.getMessage(), userInfo)
                        + "): use redis://host:port or redis://host1:port1,host2:port2 for a cluster");
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("redisUri \"" + redact(uri) + "\" names no host: use redis://host:port");
        }
        return out;
    }

    /**
     * A {@code redis-sentinel://[[user:]password@]host1:26379,host2:26379[/db]#master} URI (Lettuce's syntax): one
     * {@link RedisURI} whose sentinels Lettuce asks for the master's address at every (re)connection.
     */
    private static RedisURI sentinel(String uri, Duration timeout) {
        int hash = uri.lastIndexOf('#');
        if (hash < 0 || uri.substring(hash + 1).isBlank()) {
            throw new IllegalArgumentException("redisUri \"" + redact(uri) + "\" names no master: end it with"
                    + " #<name>, the name the sentinels monitor (sentinel monitor <name> host port quorum), as in "
                    + SENTINEL_FORM);
        }
        RedisURI u;
        try {
            u = RedisURI.create(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("redisUri \"" + redact(uri) + "\" is not a Redis Sentinel URI ("
                    + scrub(e.getMessage(), userInfo(uri)) + "): use " + SENTINEL_FORM);
        }
        if (u.getSentinels().isEmpty()) {
            throw new IllegalArgumentException(
                    "redisUri \"" + redact(uri) + "\" names no sentinel: use " + SENTINEL_FORM);
        }
        u.setTimeout(timeout);
        for (RedisURI s : u.getSentinels()) {
            s.setTimeout(timeout);
        }
        return u;
    }

    private static final String SENTINEL_FORM = "redis-sentinel://[password@]host1:26379,host2:26379[/db]#mymaster";

    /** Checks the builder's {@code connectTimeout}: positive. */
    static Duration checkConnectTimeout(Duration d) {
        Objects.requireNonNull(d, "connectTimeout must not be null: e.g. Duration.ofSeconds(2)");
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("connectTimeout " + d + " must be positive, e.g. Duration.ofSeconds(2)");
        }
        return d;
    }
}
