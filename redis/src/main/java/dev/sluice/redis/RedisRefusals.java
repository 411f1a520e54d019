package dev.sluice.redis;

import dev.sluice.store.ServerProbe;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.protocol.RedisProtocolException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * What Redis, or whatever answers at its address, refused of this client's configuration: a misconfiguration, which
 * no retry fixes, told apart from an outage, which heals. Each is said with its fix:
 * <ul>
 * <li>the login: {@code WRONGPASS} (a wrong user or password), {@code NOAUTH} (a password is required and the URI
 *     gives none), Redis 5's {@code ERR invalid password};</li>
 * <li>a privilege: {@code NOPERM} (an ACL user without the scripting commands or the keys);</li>
 * <li>the address: a host name that does not resolve, a server that answers in another protocol (Lettuce cannot
 *     decode its reply: an HTTP port), a TLS handshake that fails;</li>
 * <li>at startup only, a server that closed or never answered the handshake is asked what it is
 *     ({@link ServerProbe}): PostgreSQL's port, a plain Redis asked for TLS ({@code rediss://}), a TLS-only Redis
 *     asked in plain text.</li>
 * </ul>
 * Redis's error codes (the first word of an error reply) are its protocol's, like SQLSTATEs: matched here, once.
 */
final class RedisRefusals {
    /** The longest a startup failure waits for each of the probe's questions. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

    private static final String CREDENTIALS = "fix the user name and password in the URI"
            + " (redis://user:password@host:port, or redis://:password@host:port for the default user)";

    private RedisRefusals() {}

    /** What was refused, with its fix ("refused the password (WRONGPASS …): fix …"), or null for an outage. */
    static @Nullable String of(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String m = String.valueOf(t.getMessage());
            if (t instanceof RedisCommandExecutionException) {
                if (m.startsWith("WRONGPASS")
                        || m.startsWith("ERR invalid password")
                        || m.startsWith("ERR AUTH")
                        || m.startsWith("ERR Client sent AUTH")) {
                    return "refused the user name or password (" + m + "): " + CREDENTIALS;
                }
                if (m.startsWith("NOAUTH")) {
                    return "requires a password, and the URI gives none (" + first(m) + "): " + CREDENTIALS;
                }
                if (m.startsWith("NOPERM")) {
                    return "refused a command or key Sluice needs (" + m + "): grant the ACL user the scripting"
                            + " commands and the limiter's keys, e.g. ACL SETUSER <user> +@scripting +info +del +ping"
                            + " ~<keyPrefix>*";
                }
            }
            if (t instanceof UnknownHostException) {
                return "names a host that does not resolve (" + m + "): check the host name in the URI";
            }
            if (t instanceof RedisProtocolException) {
                return "answered in another protocol than Redis's (" + m + "): check the host and port in the URI";
            }
            if (t instanceof SSLException || t.getClass().getName().endsWith("NotSslRecordException")) {
                return "failed the TLS handshake (" + m + "): check that the server's certificate is trusted and"
                        + " names the host, or use redis:// if the server does not speak TLS";
            }
        }
        return null;
    }

    /**
     * At startup, when the connection failed without saying why (closed, reset, or no answer to the handshake):
     * what {@link ServerProbe} finds at the first address, if that is not what the URI expects; else null.
     */
    static @Nullable String wrongServer(Throwable e, List<RedisURI> uris, Duration connectTimeout) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConnectException
                    || t instanceof NoRouteToHostException
                    || t instanceof UnknownHostException) {
                return null; // nothing listens there, or the host is unreachable: nothing to ask
            }
        }
        RedisURI u = uris.get(0);
        if (u.getSocket() != null || u.getHost() == null) {
            return null;
        }
        Duration timeout = connectTimeout.compareTo(PROBE_TIMEOUT) < 0 ? connectTimeout : PROBE_TIMEOUT;
        ServerProbe.Speaks s = ServerProbe.identify(u.getHost(), u.getPort(), timeout);
        if (s == ServerProbe.Speaks.REDIS && u.isSsl()) {
            return "answers in plain text, not TLS: use redis:// (or enable TLS on the server)";
        }
        if (s == ServerProbe.Speaks.REDIS_TLS && !u.isSsl()) {
            return "speaks only TLS: use rediss://";
        }
        if (s == ServerProbe.Speaks.POSTGRESQL || s == ServerProbe.Speaks.HTTP || s == ServerProbe.Speaks.TLS) {
            return "is " + s.description() + ", not Redis: check the host and port in the URI";
        }
        return null;
    }

    /** The first sentence of Redis's long NOAUTH reply. */
    private static String first(String m) {
        int comma = m.indexOf(',');
        return comma > 0 ? m.substring(0, comma) : m;
    }
}
