package dev.sluice.postgres;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.store.StoreClock;
import java.time.Duration;
import java.util.Set;
import javax.sql.DataSource;

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

    private Startup() {
    }

    /** The pool to decide on: its own for {@code jdbcUrl} (when not null), else {@code given}, wrapped if it does not pool. */
    static Pools.Resolved connect(String jdbcUrl, DataSource given, int size, Duration budget) {
        try {
            return jdbcUrl != null ? Pools.own(jdbcUrl, size, budget) : Pools.resolve(given, size, budget);
        } catch (RuntimeException e) {
            if (e instanceof IllegalArgumentException) {
                throw e;
            }
            String where = jdbcUrl != null ? Pools.redact(jdbcUrl) : Pools.describe(given);
            throw new PostgresStoreException("cannot connect to PostgreSQL at " + where + ": " + rootMessage(e)
                    + "; check that the database is up and the URL, user and password are right", null, e,
                    Degradation.UNAVAILABLE);
        }
    }

    /**
     * One real round trip before {@code build()} returns: the schema is there (created now by {@code migrate} if it
     * is missing and {@code migrateIfMissing}), the statement runs, the first connection is made; so the first
     * caller's decision pays for none of it. A peek: it writes nothing. Returns whether it created the schema.
     */
    static boolean warmUp(AttemptLoop attempts, DecisionStatements statements, StoreClock clock, String where,
            boolean migrateIfMissing, Runnable migrate) {
        Limit probe = Limit.fixedWindow(1, Duration.ofSeconds(1));
        long end = System.nanoTime() + WARM_UP_BUDGET.toNanos();
        boolean migrated = false;
        while (true) {
            DecisionCall call = DecisionCall.maintenance(end);
            try {
                attempts.run(null, probe, call, WARM_UP_BUDGET.toNanos(),
                        c -> statements.peek(c, "sluice:warm-up", probe, 1, clock.read()));
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
                throw new PostgresStoreException("cannot use PostgreSQL at " + where + ": " + e.getMessage(),
                        e.sqlState(), e, e.degradation());
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PostgresStoreException("interrupted while waiting for the pool's first connection", null, e,
                    Degradation.UNAVAILABLE);
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
