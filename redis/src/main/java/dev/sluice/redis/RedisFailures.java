package dev.sluice.redis;

import dev.sluice.Degradation;
import dev.sluice.store.TimeBudget;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What a Redis failure means for a decision, in one place: each of Lettuce's exceptions and Redis's error replies
 * becomes a {@link RedisStoreException} whose {@link Degradation} says whether Redis timed out, cannot be reached
 * (or said it cannot serve now), or answered with an error (the store is healthy), with a message that names the
 * server (never its password) and what to do.
 */
final class RedisFailures {
    /** How the scripts report a bad key: {@code SLUICEWRONGTYPE 2} (Redis wraps it in its own words). */
    private static final Pattern SCRIPT_ERROR = Pattern.compile("SLUICE(WRONGTYPE|CORRUPT) (\\d+)");
    /**
     * How Redis before 7 wraps an error that a script's {@code redis.call} raised; Redis 7 answers with the error itself.
     */
    private static final Pattern SCRIPT_WRAPPER =
            Pattern.compile("^ERR Error running script \\(call to f_[0-9a-f]+\\): @user_script:\\d+: ");

    private final String where;
    private final TimeBudget budget;
    private final ReconnectWatch reconnects;

    /**
     * @param where the server(s), as {@link RedisUris#describe} shows them
     * @param budget the call's budget
     * @param reconnects what Lettuce's reconnections met (a refused login makes "not connected" a misconfiguration)
     */
    RedisFailures(String where, TimeBudget budget, ReconnectWatch reconnects) {
        this.where = where;
        this.budget = budget;
        this.reconnects = reconnects;
    }

    /**
     * Why {@code create()} could not connect: a misconfiguration ({@link RedisRefusals}: what was refused, with the
     * fix; or, when the server closed or never answered the handshake, what {@link dev.sluice.store.ServerProbe}
     * finds there instead of Redis) fails at once as {@code MISCONFIGURED}; anything else is an outage.
     */
    static RedisStoreException cannotConnect(
            RuntimeException e, String rawUri, List<RedisURI> uris, String where, Duration connectTimeout) {
        String secret = RedisUris.userInfo(rawUri);
        String refused = RedisRefusals.of(e);
        String at = "Redis at " + where + " ";
        if (refused == null) {
            refused = RedisRefusals.wrongServer(e, uris, connectTimeout);
            at = where + " ";
        }
        if (refused != null) {
            return new RedisStoreException(at + RedisUris.scrub(refused, secret), e, Degradation.MISCONFIGURED);
        }
        return new RedisStoreException(
                "cannot connect to Redis at " + where + " within " + connectTimeout.toMillis()
                        + " ms (the connect timeout): " + RedisUris.scrub(e.getMessage(), secret) + causes(e, secret)
                        + "; check that Redis is running and the URI is right",
                e,
                classify(e));
    }

    /** The messages of {@code e}'s causes, which Lettuce's "Unable to connect" leaves out. */
    private static String causes(Throwable e, String secret) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e.getCause(); t != null && t != t.getCause(); t = t.getCause()) {
            b.append(" (")
                    .append(RedisUris.scrub(String.valueOf(t.getMessage()), secret))
                    .append(')');
        }
        return b.toString();
    }

    /** The limiter's exception for what a call (or {@code create()}) failed with; {@code call} may be null. */
    RuntimeException translate(Throwable e, @Nullable ScriptCall call) {
        Throwable c = unwrap(e);
        if (c instanceof RedisStoreException r) {
            return r;
        }
        if (c instanceof IllegalArgumentException
                || (c instanceof IllegalStateException && !(c instanceof RedisException))) {
            return (RuntimeException) c;
        }
        String msg = reply(c);
        if (c instanceof RedisCommandExecutionException && call != null) {
            Matcher m = SCRIPT_ERROR.matcher(msg);
            if (m.find()) {
                String permit = call.describePermit(Integer.parseInt(m.group(2)));
                if (m.group(1).equals("WRONGTYPE")) {
                    return new RedisStoreException(
                            permit + " holds a value of another Redis type (WRONGTYPE):"
                                    + " something else wrote that key; nothing was changed. Delete the key or give the limiter"
                                    + " another keyPrefix",
                            c,
                            Degradation.STORE_ERROR);
                }
                return new RedisStoreException(
                        permit + " holds a value Sluice did not write; nothing was changed."
                                + " Delete the key or give the limiter another keyPrefix",
                        c,
                        Degradation.STORE_ERROR);
            }
        }
        if (c instanceof RedisCommandTimeoutException || c instanceof TimeoutException) {
            return timedOut(c);
        }
        if (c instanceof RedisConnection.ConnectionLost
                || (c instanceof RedisException && "Connection disconnected".equals(msg))) {
            return new RedisStoreException(
                    "the connection to Redis at " + where + " was lost before Redis answered:"
                            + " the decision may or may not have been applied (it is never re-sent, so never applied twice);"
                            + " Lettuce reconnects in the background",
                    c,
                    Degradation.UNAVAILABLE);
        }
        if (c instanceof RedisException && msg.startsWith("Currently not connected")) {
            String refused = reconnects.refusal();
            if (refused != null) {
                return new RedisStoreException(
                        "not connected to Redis at " + where + ": when this client reconnected,"
                                + " Redis " + refused
                                + "; nothing was sent, and reconnections back off up to 30 s until the"
                                + " configuration is fixed",
                        c,
                        Degradation.MISCONFIGURED);
            }
            return new RedisStoreException(
                    "not connected to Redis at " + where + " (Lettuce is reconnecting in the"
                            + " background): nothing was sent",
                    c,
                    Degradation.UNAVAILABLE);
        }
        String refused = RedisRefusals.of(c);
        if (refused != null) {
            return new RedisStoreException("Redis at " + where + " " + refused, c, Degradation.MISCONFIGURED);
        }
        if (c instanceof RedisConnectionException) {
            return new RedisStoreException("cannot reach Redis at " + where + ": " + msg, c, Degradation.UNAVAILABLE);
        }
        return new RedisStoreException("Redis at " + where + " failed: " + msg, c, classify(c));
    }

    /** The failure of a call that found {@code max} calls already waiting for a batch: nothing was sent. */
    RedisStoreException overloaded(int max) {
        return new RedisStoreException(
                max + " decisions are already waiting for Redis at " + where + ", which is not"
                        + " answering fast enough: nothing was sent for this one; check Redis, or call less while it recovers",
                Degradation.OVERLOADED);
    }

    /** The failure of a call whose budget ran out. */
    RedisStoreException timedOut(Throwable cause) {
        return new RedisStoreException(
                "Redis at " + where + " did not answer within " + budget
                        + " (the time budget): it is down, paused, unreachable or overloaded; raise timeBudget if it is"
                        + " merely slow",
                cause,
                Degradation.TIMEOUT);
    }

    /**
     * How a Redis failure degrades a decision: an error reply is the store's answer ({@code STORE_ERROR},
     * the store is healthy), except the replies by which Redis says it cannot serve now (loading its data,
     * busy with a long script, a cluster without a master for the slot), which, like every failure to talk
     * to it, are {@code UNAVAILABLE}; and a refused login, privilege or address ({@link RedisRefusals}), which is
     * {@code MISCONFIGURED}.
     */
    static Degradation classify(Throwable e) {
        Throwable c = unwrap(e);
        if (RedisRefusals.of(c) != null) {
            return Degradation.MISCONFIGURED;
        }
        if (c instanceof RedisCommandTimeoutException || c instanceof TimeoutException) {
            return Degradation.TIMEOUT;
        }
        if (c instanceof RedisCommandExecutionException) {
            String m = reply(c);
            for (String down : UNAVAILABLE_REPLIES) {
                if (m.startsWith(down)) {
                    return Degradation.UNAVAILABLE;
                }
            }
            return Degradation.STORE_ERROR;
        }
        if (c instanceof RedisException || c instanceof IOException) {
            return Degradation.UNAVAILABLE; // Lettuce's own failures: not connected, closed, cannot connect
        }
        return Degradation.STORE_ERROR;
    }

    private static final List<String> UNAVAILABLE_REPLIES =
            List.of("LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "READONLY");

    /**
     * The failure's message; for an error reply, as Redis 7 gives it, so that an error a script's {@code redis.call}
     * raised reads the same on every version: Redis 6 prefixes it with {@link #SCRIPT_WRAPPER}'s words, which the
     * batched path, catching the error inside the script, never sees.
     */
    static String reply(Throwable c) {
        String m = String.valueOf(c.getMessage());
        return c instanceof RedisCommandExecutionException
                ? SCRIPT_WRAPPER.matcher(m).replaceFirst("")
                : m;
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
