package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.store.StoreClock;
import dev.sluice.store.TimeBudget;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A {@link RateLimiter} whose state lives in PostgreSQL (12 and later) or YugabyteDB's YSQL: shared by
 * every application instance, inspectable with SQL, exact.
 *
 * <h2>One round trip per decision</h2>
 * A single-permit decision is one prepared call of a PL/pgSQL function per algorithm, in autocommit, under READ
 * COMMITTED ({@link DecisionStatements}; the functions ship as SQL files, see {@link Migrations}). <b>A denied call
 * writes nothing.</b> The function returns the state it decided on and the instant it used; the pure step of
 * {@code dev.sluice.algorithm} decodes them into the {@link Decision}, so every field is the in-memory limiter's.
 * Concurrent token-bucket and GCRA decisions share one statement and one commit ({@link Batcher}; on by default,
 * {@link Builder#batching(int, int)}); a lone caller's decision is sent at once, alone. A multi-permit {@link #tryAcquire(List)} is one transaction that locks its rows in one
 * fixed order ({@link MultiPermitTransaction}): all or nothing, and never a deadlock; concurrent ones share one
 * transaction and one commit, batched as decisions are. A tryAcquireEstimate and a
 * settle are one function call each, batched as decisions are ({@link SettleStatements}; expired ones: the cleaners).
 *
 * <h2>Time</h2>
 * By default the database's clock decides ({@code clock_timestamp()}, microseconds, never earlier than the instant
 * stored in the row): application clocks never decide a distributed bucket. {@link Builder#ticker(Ticker)} makes
 * a client ticker decide instead, which is how the conformance suite drives the store.
 *
 * <h2>Failures and the time budget</h2>
 * Every decision has a budget ({@link RetryPolicy#budget()}, 1 s by default) counted from the call. Its JDBC
 * work runs on this limiter's worker threads ({@link Workers}, {@link Builder#threads(int)}); the caller waits for
 * it ({@link CallerWait}) until the budget plus at most {@value #SLACK_MILLIS} ms, longer only while the database
 * keeps answering others (a decision queued for a worker, a connection or a batch; a statement in a lock convoy on
 * a hot row). A decision whose caller gave up is never sent; a statement under way is cancelled. The worker
 * ({@link AttemptLoop}) gives each statement the time left as its query timeout, retries SQLSTATE 40001, 40P01
 * until the budget ends, after the {@link RetryPolicy}'s jittered backoff, and a broken connection at once (class 08:
 * after a restart the pool still holds connections to the old server); if the database died while it ran a statement that committed, the retry takes again:
 * the limit errs on the strict side. Anything else is a {@link PostgresStoreException} whose
 * {@link PostgresStoreException#degradation() degradation} ({@link PostgresFailures}) says whether it timed out,
 * the database is unavailable, the client side is overloaded, or the database answered with an error, for
 * {@code dev.sluice.failsafe.FailSafeRateLimiter} to apply its policy to. The worker queue and the batching queue
 * hold at most {@link Builder#maxQueuedDecisions(int)} decisions; past that a call is rejected at once.
 * After {@link #close()} every call throws {@link IllegalStateException} (a batched or async call racing
 * close gets it as its future's failure). Input is checked before anything is sent: keys PostgreSQL text
 * cannot hold (NUL characters, unpaired surrogates) are an {@link IllegalArgumentException}.
 *
 * <p>The DataSource belongs to the caller: {@link #close()} stops this limiter's threads and cleaners but
 * does not close it.
 */
public final class PostgresRateLimiter implements RateLimiter {

    private static final System.Logger LOG = System.getLogger(PostgresRateLimiter.class.getName());

    /**
     * How far past its budget a caller may be held at most, in milliseconds, on top of the time the JVM
     * takes to wake a parked thread (well under a millisecond on an idle machine): the caller waits for
     * its worker until the deadline plus {@link CallerWait#GRACE_MILLIS}, so that the answer to a statement the
     * server cancelled exactly at the deadline (SQLSTATE 57014, nothing taken) can still reach it, then
     * builds the exception. Every decision, sync or async, batched or not, is bounded so.
     */
    public static final long SLACK_MILLIS = 2;

    /** Worker threads running the JDBC calls, by default: match the pool's maximum size. */
    public static final int DEFAULT_THREADS = 16;

    /** Token-bucket and GCRA decisions that may share one statement, by default ({@link Builder#batching(int, int)}). */
    public static final int DEFAULT_MAX_BATCH_SIZE = 64;

    /** Decisions that may wait in the async executor's queue or the batching queue; more are rejected. */
    public static final int DEFAULT_MAX_QUEUED_DECISIONS = 10_000;

    /** What every call on a closed limiter throws (as an {@link IllegalStateException}). */
    static final String CLOSED = "this PostgresRateLimiter is closed: build a new one";

    private final DataSource dataSource;
    /** The pool this limiter made (for a JDBC URL or a DataSource that does not pool), closed with it; or null. */
    private final @Nullable HikariDataSource ownedPool;
    /** Whose clock decides: the database's by default, a client ticker's in tests. */
    private final StoreClock clock;

    private final String schema;
    private final String prefix;
    private final RetryPolicy retryPolicy;
    private final Workers workers;
    private final ExpiryCleaners cleaners;
    private final AttemptLoop attempts;
    private final PostgresFailures failures;
    private final CallerWait waits;
    /** The operations, one per kind of decision, that both views use. */
    private final PostgresCalls calls;

    private final PostgresInFlight inFlight;
    private volatile boolean closed;
    /** build() found Sluice's tables or functions missing and created them. */
    private final boolean schemaCreated;

    private PostgresRateLimiter(Builder b) {
        TimeBudget budget = TimeBudget.of("RetryPolicy.budget", b.retryPolicy.budget());
        DatabaseHealth health = new DatabaseHealth();
        Pools.Resolved connections =
                Startup.connect(b.jdbcUrl, b.dataSource, b.threads, b.retryPolicy.budget(), b.scheduler.ticker());
        this.dataSource = connections.dataSource();
        this.ownedPool = connections.owned();
        String where = connections.where();
        this.clock = b.clock;
        this.schema = b.schema;
        this.prefix = b.prefix;
        this.retryPolicy = b.retryPolicy;
        Sql sql = new Sql(schema, prefix);
        this.failures = new PostgresFailures(schema, prefix, b.retryPolicy.budget(), health);
        this.waits = new CallerWait(budget, health, failures, b.scheduler);
        this.attempts = new AttemptLoop(dataSource, b.retryPolicy, budget, health, failures, b.scheduler);
        DecisionStatements statements = new DecisionStatements(sql, schema);
        SettleStatements settles = new SettleStatements(sql, schema);
        this.cleaners = new ExpiryCleaners(new ExpiredRows(attempts, sql, clock), () -> closed, b.scheduler);
        this.workers = new Workers(
                b.asyncExecutor,
                b.threads,
                b.maxQueued,
                attempts,
                failures,
                () -> closed,
                b.scheduler.threadFactory("postgres"));
        this.calls = new PostgresCalls(b, sql, attempts, failures, workers, statements, settles, budget, () -> closed);
        InFlightStatements slots = new InFlightStatements(sql);
        this.inFlight = new PostgresInFlight(
                calls,
                waits,
                budget,
                clock,
                slots,
                Batcher.of(b, new BatchSend<>(attempts, slots::many), failures::notSent, "postgres-slots"));
        // Loading the failure path's classes costs a few ms once, which a caller already at the end of its budget
        // would pay on top of it (measured: 26 ms instead of 30-33 ms on the first exhausted-pool decision at a
        // 25 ms budget). Built and dropped here instead.
        StackTraceElement[] unused =
                failures.notSent("warm-up", new TimeoutException()).getStackTrace();
        try {
            this.schemaCreated = Startup.warmUp(attempts, statements, clock, where, b.migrateIfMissing, this::migrate);
            if (ownedPool != null) {
                Pools.fill(ownedPool, Startup.WARM_UP_BUDGET);
            }
            Startup.warmPaths(this);
            attempts.forget(); // stats() counts the callers' decisions, not the warm-up's
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** A limiter on {@code dataSource} with the defaults: schema {@code public}, prefix {@code sluice_}, the database's clock. */
    public static PostgresRateLimiter create(DataSource dataSource) {
        return builder(dataSource).build();
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(
                Objects.requireNonNull(
                        dataSource,
                        "dataSource must not be null: give a DataSource, e.g. a HikariDataSource, or a JDBC URL"),
                null);
    }

    /**
     * A limiter on the database at {@code jdbcUrl} ({@code jdbc:postgresql://host:5432/db?user=…&password=…}) with
     * the defaults, over a HikariCP pool of its own ({@link Builder#threads(int)} connections) that
     * {@link #close()} closes.
     */
    public static PostgresRateLimiter create(String jdbcUrl) {
        return builder(jdbcUrl).build();
    }

    /** A builder for the database at {@code jdbcUrl}, over a pool of its own (see {@link #create(String)}). */
    public static Builder builder(String jdbcUrl) {
        return new Builder(
                null,
                Objects.requireNonNull(
                        jdbcUrl,
                        "jdbcUrl must not be null: e.g. jdbc:postgresql://localhost:5432/postgres?user=postgres"));
    }

    /** Configures a {@link PostgresRateLimiter}: its options are those of {@link PostgresOptions}. */
    public static final class Builder extends PostgresOptions<Builder> {
        private Builder(@Nullable DataSource dataSource, @Nullable String jdbcUrl) {
            super(dataSource, jdbcUrl);
        }

        @Override
        Builder self() {
            return this;
        }

        public PostgresRateLimiter build() {
            return new PostgresRateLimiter(this);
        }
    }

    /** Counters since this limiter was built. */
    public record Stats(long decisions, long retries, long retriesExhausted) {}

    /**
     * Decisions made, retries taken (after 40001/40P01, or on another connection after a broken one), and decisions
     * that gave up because their conflicts outlasted the time budget.
     */
    public Stats stats() {
        return new Stats(attempts.decisions.sum(), attempts.retries.sum(), attempts.retriesExhausted.sum());
    }

    public String schema() {
        return schema;
    }

    public String tablePrefix() {
        return prefix;
    }

    /**
     * Whether building this limiter created Sluice's schema: its tables or functions were missing and
     * {@link Builder#migrateIfMissing} (the default) let it {@link #migrate()}. For the application to say so once.
     */
    public boolean schemaCreated() {
        return schemaCreated;
    }

    /**
     * Creates (or brings up to date) the tables, indexes and functions in the configured schema, in one
     * transaction. Idempotent and safe to call from several instances at once (they serialize on an
     * advisory lock where the database has them).
     *
     * @return what it created or changed; {@link MigrationReport#nothingToDo()} when the schema was up to date
     */
    public MigrationReport migrate() {
        calls.checkOpen();
        return Migrations.apply(dataSource, schema, prefix);
    }

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        return waits.await(calls.tryAcquire(key, limit, cost));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        return waits.bounded(calls.tryAcquire(key, limit, cost)); // no thread blocks on it
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        return waits.await(calls.reserve(key, limit, cost, maxWait));
    }

    @Override
    public CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
        return waits.bounded(calls.reserve(key, limit, cost, maxWait));
    }

    /**
     * Check only: what {@link #tryAcquire(String, Limit, long)} would decide for {@code cost}, taking
     * nothing. One plain {@code SELECT} of the row and the clock: it locks nothing, writes nothing, and a
     * key never seen stays absent (it is read as fresh). Time is the client ticker's when one is set, else
     * the database's {@code clock_timestamp()}, never earlier than the instant stored in the row, as for
     * every decision; {@link Algorithms#peek} then decides on that state. Not batched (nothing is
     * committed); same budget, retries and failures as tryAcquire.
     */
    @Override
    public Decision peek(String key, Limit limit, long cost) {
        return waits.await(calls.peek(key, limit, cost));
    }

    @Override
    public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
        return waits.bounded(calls.peek(key, limit, cost));
    }

    @Override
    public void reset(String key, Limit limit) {
        waits.await(calls.reset(key, limit));
    }

    @Override
    public CompletableFuture<Void> resetAsync(String key, Limit limit) {
        return waits.bounded(calls.reset(key, limit));
    }

    @Override
    public Decision tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return waits.await(calls.tryAcquireEstimate(key, limit, estimate, id, settleWithin));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String id, Duration settleWithin) {
        return waits.bounded(calls.tryAcquireEstimate(key, limit, estimate, id, settleWithin));
    }

    @Override
    public Settlement settle(String key, Limit limit, String id, long actual) {
        return waits.await(calls.settle(key, limit, id, actual));
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String id, long actual) {
        return waits.bounded(calls.settle(key, limit, id, actual));
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        return tryAcquireEach(permits).decision();
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
        return tryAcquireEachAsync(permits).thenApply(PermitDecisions::decision);
    }

    /** One transaction (see {@code MultiPermitTransaction}), whose rows tell each permit's own decision. */
    @Override
    public PermitDecisions tryAcquireEach(List<Permit> permits) {
        return waits.await(calls.tryAcquireEach(permits));
    }

    @Override
    public CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
        return waits.bounded(calls.tryAcquireEach(permits));
    }

    /** Slots with a lease in this database, batched as decisions are: see {@link PostgresInFlight}. */
    @Override
    public InFlightLimiter inFlight() {
        return inFlight;
    }

    // ------------------------------------------------------------------ expiry

    /**
     * Starts a cleaner deleting expired rows every {@code interval} (on the builder's {@code scheduler}): 1,000 rows a
     * batch, at most 10 batches a sweep. Closing this limiter stops it.
     */
    public ExpiryCleaner cleaner(Duration interval) {
        return cleaner(interval, ExpiryCleaner.DEFAULT_BATCH_SIZE, ExpiryCleaner.DEFAULT_MAX_BATCHES);
    }

    /** Starts a cleaner with its own batch size and number of batches a sweep. */
    public ExpiryCleaner cleaner(Duration interval, int batchSize, int maxBatchesPerSweep) {
        calls.checkOpen();
        return cleaners.start(interval, batchSize, maxBatchesPerSweep);
    }

    /** A cleaner that is not scheduled: call {@link ExpiryCleaner#sweep()} yourself (tests, cron jobs). */
    public ExpiryCleaner manualCleaner(int batchSize, int maxBatchesPerSweep) {
        calls.checkOpen();
        return cleaners.manual(batchSize, maxBatchesPerSweep);
    }

    /**
     * Stops the cleaners and the async threads this limiter started, and closes the pool it made (for a JDBC URL
     * or a DataSource that does not pool); a DataSource given to it that pools stays open.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        calls.closeBatches();
        inFlight.close();
        cleaners.closeAll();
        workers.close(retryPolicy.budget().toMillis() + 1000);
        if (ownedPool != null) {
            ownedPool.close();
        }
        LOG.log(System.Logger.Level.DEBUG, "closed; {0}", stats());
    }

    @Override
    public String toString() {
        return "PostgresRateLimiter[schema=" + schema + ", prefix=" + prefix + ", time="
                + (clock.isStore() ? "clock_timestamp()" : clock) + "]";
    }
}
