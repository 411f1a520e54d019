package dev.sluice.postgres;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.store.ServerProbe;
import dev.sluice.store.StoreClock;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * What {@code build()} does before the first caller may decide: get pooled connections (its own pool for a JDBC URL
 * or a DataSource that does not pool), then one real round trip, creating the schema if it is missing. Either
 * failing names the database (password hidden), the cause and the fix.
 */
final class Startup {
    /** The budget of the warm-up: a first connection and statement, on a cold server. */
    static final Duration WARM_UP_BUDGET = Duration.ofSeconds(10);

    /** SQLSTATEs of a schema without Sluice's tables or functions: undefined table, function, schema. */
    private static final Set<String> SCHEMA_MISSING = Set.of("42P01", "42883", "3F000");

    private Startup() {}

    /**
     * The pool to decide on: its own for {@code jdbcUrl} (when not null), else {@code given}, wrapped if it does not
     * pool; a pool made here holds logins back after a refusal on {@code ticker} ({@link LoginGate}).
     */
    static Pools.Resolved connect(
            @Nullable String jdbcUrl, @Nullable DataSource given, int size, Duration budget, Ticker ticker) {
        if (jdbcUrl != null) {
            return connect(() -> Pools.own(jdbcUrl, size, budget, ticker), () -> Pools.redact(jdbcUrl));
        }
        DataSource ds = Objects.requireNonNull(given, "a builder has a URL or a DataSource");
        return connect(() -> Pools.resolve(ds, size, budget, ticker), () -> Pools.describe(ds));
    }

    private static Pools.Resolved connect(Supplier<Pools.Resolved> open, Supplier<String> where) {
        try {
            return open.get();
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw cannotConnect(where.get(), e);
        }
    }

    /**
     * Why the first connection failed: a refused login, database or address ({@link PostgresFailures#refusal}) or,
     * when the server closed, reset or never answered the handshake, another server at that address
     * ({@link ServerProbe}): a misconfiguration, which fails at once; anything else is an outage.
     */
    static PostgresStoreException cannotConnect(String where, Throwable e) {
        String refused = PostgresFailures.refusal(e);
        String state = e instanceof SQLException s ? PostgresFailures.sqlState(s) : firstState(e);
        if (refused != null) {
            return new PostgresStoreException(
                    "cannot connect to PostgreSQL at " + where + ": the database " + refused,
                    state,
                    e,
                    Degradation.MISCONFIGURED);
        }
        String wrong = wrongServer(where, e);
        if (wrong != null) {
            return new PostgresStoreException(where + " " + wrong, state, e, Degradation.MISCONFIGURED);
        }
        return new PostgresStoreException(
                "cannot connect to PostgreSQL at " + where + ": " + rootMessage(e)
                        + "; check that the database is up and the URL is right",
                state,
                e,
                PostgresFailures.isTimeout(e) ? Degradation.TIMEOUT : Degradation.UNAVAILABLE);
    }

    /** The longest the probe of a failed first connection waits for each of its questions. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);

    private static final Pattern HOST_PORT = Pattern.compile("^jdbc:postgresql://(\\[[^\\]]+\\]|[^:/,?]+)(?::(\\d+))?");

    /**
     * When nothing PostgreSQL said explains the failure (no SQLSTATE but the driver's own class 08: the server
     * closed, reset or never answered), what {@link ServerProbe} finds at the URL's first host, if it is not
     * PostgreSQL; else null. Not asked when nothing listens there or the host does not resolve.
     */
    static @Nullable String wrongServer(String where, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConnectException
                    || t instanceof NoRouteToHostException
                    || t instanceof UnknownHostException) {
                return null;
            }
            if (t instanceof SQLException s
                    && s.getSQLState() != null
                    && !s.getSQLState().startsWith("08")) {
                return null; // PostgreSQL itself answered
            }
        }
        Matcher m = HOST_PORT.matcher(where);
        if (!m.find()) {
            return null; // a DataSource whose URL is unknown
        }
        String host =
                m.group(1).startsWith("[") ? m.group(1).substring(1, m.group(1).length() - 1) : m.group(1);
        int port = m.group(2) != null ? Integer.parseInt(m.group(2)) : 5432;
        ServerProbe.Speaks speaks = ServerProbe.identify(host, port, PROBE_TIMEOUT);
        return switch (speaks) {
            case REDIS, REDIS_TLS, HTTP, TLS ->
                "is " + speaks.description() + ", not PostgreSQL: check the host and" + " port in the URL";
            default -> null;
        };
    }

    private static @Nullable String firstState(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s && s.getSQLState() != null) {
                return s.getSQLState();
            }
        }
        return null;
    }

    /**
     * One real round trip before {@code build()} returns: the schema is there (created now by {@code migrate} if it
     * is missing and {@code migrateIfMissing}), the statement runs, the first connection is made; so the first
     * caller's decision pays for none of it. A peek: it writes nothing. Returns whether it created the schema.
     */
    static boolean warmUp(
            AttemptLoop attempts,
            DecisionStatements statements,
            StoreClock clock,
            String where,
            boolean migrateIfMissing,
            Runnable migrate) {
        Limit probe = Limit.fixedWindow(1, Duration.ofSeconds(1));
        long end = System.nanoTime() + WARM_UP_BUDGET.toNanos();
        boolean migrated = false;
        while (true) {
            DecisionCall call = DecisionCall.maintenance(end);
            try {
                attempts.run(null, probe, call, WARM_UP_BUDGET.toNanos(), c -> {
                    statements.checkNewestTable(c); // a schema of an earlier version: migrated below
                    return statements.peek(c, "sluice:warm-up", probe, 1, clock.read());
                });
                return migrated;
            } catch (PostgresStoreException e) {
                if (!migrated && migrateIfMissing && SCHEMA_MISSING.contains(String.valueOf(e.sqlState()))) {
                    migrate.run();
                    migrated = true;
                    continue;
                }
                if (e.degradation() == Degradation.OVERLOADED && end - System.nanoTime() > 0) {
                    // a pool that has not opened its connections yet and waits less than that for one (HikariCP's
                    // connectionTimeout): the database is not refusing, so give the pool the warm-up's time
                    pause();
                    continue;
                }
                throw new PostgresStoreException(
                        "cannot use PostgreSQL at " + where + ": " + e.getMessage(), e.sqlState(), e, e.degradation());
            }
        }
    }

    /** The key of the limiter's own warm-up decision (the service's keys are {@code domain:…}, never this). */
    static final String WARM_UP_KEY = "sluice:warm-up";

    /**
     * One decision along each path a caller's takes, after {@link #warmUp} proved the database: a token bucket
     * through the batcher (or a worker, without batching), a window peek and a reset through the workers. The first
     * caller's decision then pays for no class loading, statement preparation or function compilation, which on a
     * busy machine took a fresh service's first burst past its budget ({@code OVERLOADED}). The row of
     * {@link #WARM_UP_KEY} it writes is deleted again (the reset), and the limiter forgets these calls in its
     * {@code stats()}; a failure here fails nothing.
     */
    static void warmPaths(RateLimiter limiter) {
        Limit instant = Limit.tokenBucket(1, Rate.of(1, Duration.ofMillis(1)));
        try {
            limiter.tryAcquire(WARM_UP_KEY, instant);
            limiter.peek(WARM_UP_KEY, Limit.fixedWindow(1, Duration.ofSeconds(1)), 1);
            limiter.reset(WARM_UP_KEY, instant);
        } catch (RuntimeException e) {
            // the database answered warmUp's round trip: a slow first decision is no reason to fail build()
        }
    }

    /**
     * A real 20 ms pause between warm-up attempts, bounded by the warm-up's budget: {@code build()} blocks on the
     * database answering, which no scheduler's clock can hurry (HikariCP opens the connection on its own thread).
     */
    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PostgresStoreException(
                    "interrupted while waiting for the pool's first connection", null, e, Degradation.UNAVAILABLE);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t.getMessage() + ")";
    }
}
