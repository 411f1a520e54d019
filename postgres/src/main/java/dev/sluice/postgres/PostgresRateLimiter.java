package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.postgres.JdbcAttempt.SqlCall;
import dev.sluice.store.StoreClock;
import dev.sluice.store.TimeBudget;
import java.sql.PreparedStatement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A {@link RateLimiter} whose state lives in PostgreSQL (12 and later) or YugabyteDB's YSQL: shared by
 * every application instance, inspectable with SQL, exact.
 *
 * <h2>One round trip per decision</h2>
 * A single-permit decision ({@code tryAcquire}, {@code reserve}) is one prepared call of a PL/pgSQL
 * function per algorithm ({@code sluice_bucket_acquire}, {@code sluice_fixed_window_acquire}, …, shipped
 * as SQL files, see {@link Migrations}) in autocommit, under READ COMMITTED. For the token bucket, GCRA
 * and both window counters the function is one {@code UPDATE … WHERE <admission test>} when allowed, and
 * a plain {@code SELECT} when denied; the sliding log locks the row ({@code SELECT … FOR UPDATE}),
 * decides, and updates when allowed. Either way <b>a denied call writes nothing</b>. A first call for a key inserts the row; two
 * first calls racing on a cold table do not fail (the loser of the INSERT decides again on the winner's
 * row). The clock ({@code clock_timestamp()}) is never taken earlier than the instant stored in the row,
 * so time does not run backwards between successive deciders.
 *
 * <p>With {@link Builder#batching(int, int)}, concurrent token-bucket and GCRA decisions are coalesced
 * into one statement and one commit ({@code sluice_bucket_acquire_many}), each decision still exact.
 *
 * <p>The function returns the state it decided on and the time it used; this class then runs the very same
 * pure step from {@code dev.sluice.algorithm} on them to build the {@link Decision}, so remaining,
 * retryAfter and resetAfter are exactly the in-memory limiter's, rounded the same way (up, never early).
 * The function's own allowed/denied verdict must agree with the step's, which is checked on every call.
 *
 * <h2>Multi-permit</h2>
 * {@link #tryAcquire(List)} is one transaction: one statement per table locks (or creates) every row the
 * request names, in one fixed order (key digest, then limit id), and reads their state; the steps run
 * here, in request order, repeated (key, limit) pairs one after another; when every permit is allowed the
 * new states are written in one batch and committed, otherwise the transaction rolls back and nothing is
 * taken. Because every locker uses the same order, two multi-permit requests cannot deadlock.
 *
 * <h2>Time</h2>
 * By default the database's clock decides ({@code clock_timestamp()}, microseconds): application clocks
 * never decide a distributed bucket. {@link Builder#ticker(Ticker)} makes a client ticker decide instead,
 * which is how the conformance suite drives the store.
 *
 * <h2>Failures and the time budget</h2>
 * Every decision has a budget ({@link RetryPolicy#budget()}, 25 ms by default) counted from the call.
 * The JDBC work runs on this limiter's worker threads ({@link Builder#threads(int)}) while the caller waits
 * for it at most until the budget plus {@value #SLACK_MILLIS} ms: a pool that has no connection to give
 * (HikariCP cannot wait less than 250 ms, and validates a connection with a timeout of at least 250 ms),
 * a database that was killed or paused, a row lock, retries: none holds the caller longer. The worker
 * sends nothing once the budget has passed, gives each statement the time left as its query timeout (the
 * server cancels it then: 57014, nothing taken) and its socket that plus
 * {@value #NETWORK_MARGIN_MILLIS} ms. SQLSTATE 40001 and 40P01 are retried under the {@link RetryPolicy},
 * and so is a connection found broken (class 08: after a database restart the pool still holds
 * connections to the old server), at once on another connection; if the database died while it ran the
 * statement, that may have committed, and the retry takes again: the limit errs on the strict side;
 * anything else, or a conflict that outlasts the policy, is a {@link PostgresStoreException} whose
 * {@link PostgresStoreException#degradation() degradation} says whether it timed out, the database is
 * unavailable, the client side is overloaded, or the database answered with an error, for
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
     * its worker until the deadline plus {@link #GRACE_MILLIS}, so that the answer to a statement the
     * server cancelled exactly at the deadline (SQLSTATE 57014, nothing taken) can still reach it, then
     * builds the exception. Every decision, sync or async, batched or not, is bounded so.
     */
    public static final long SLACK_MILLIS = 2;

    /** How long past the deadline a caller still waits for its worker's answer (see {@link #SLACK_MILLIS}). */
    static final long GRACE_MILLIS = 1;

    /** How many budgets a sent statement may wait while the database answers others: its query timeout. */
    static final int SENT_PATIENCE = 10;

    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS);
    /**
     * The margin of a connection's network (socket) timeout over its statement's query timeout. It only
     * bounds how long a worker thread and its connection stay stuck on a database that stopped answering
     * (paused, or its host gone); callers are not held by it. It is wide enough that the server's answer
     * to a cancelled statement (57014) normally arrives first, so a slow database does not cost
     * connections: a socket timeout breaks the connection and the pool has to open a new one.
     */
    static final long NETWORK_MARGIN_MILLIS = 250;

    /**
     * The budget of the expiry cleaner's deletes and of {@link #migrate()}: they run on their own thread
     * (or at start-up) and no caller waits for them, so the decision budget, a few milliseconds, would
     * only cancel useful work; this still bounds a sweep stuck on a dead database.
     */
    static final Duration MAINTENANCE_BUDGET = Duration.ofSeconds(30);

    /** Worker threads running the JDBC calls, by default: match the pool's maximum size. */
    public static final int DEFAULT_THREADS = 16;

    /** Decisions that may wait in the async executor's queue or the batching queue; more are rejected. */
    public static final int DEFAULT_MAX_QUEUED_DECISIONS = 10_000;

    /** What every call on a closed limiter throws (as an {@link IllegalStateException}). */
    static final String CLOSED = "this PostgresRateLimiter is closed: build a new one";

    /** The three state tables, in the fixed order a multi-permit request locks them. */
    enum Table {
        BUCKET, WINDOW, LOG;

        static Table of(Limit limit) {
            return switch (limit.algorithm()) {
                case TOKEN_BUCKET, GCRA -> BUCKET;
                case FIXED_WINDOW, SLIDING_WINDOW -> WINDOW;
                case SLIDING_LOG -> LOG;
            };
        }
    }

    private final DataSource dataSource;
    /** The pool this limiter made (for a JDBC URL or a DataSource that does not pool), closed with it; or null. */
    private final com.zaxxer.hikari.HikariDataSource ownedPool;
    /** The database's URL without its password, for messages. */
    private final String where;
    /** Whose clock decides: the database's by default, a client ticker's in tests. */
    private final StoreClock clock;
    private final String schema;
    private final String prefix;
    private final RetryPolicy retryPolicy;
    private final Sql sql;
    private final MultiPermitTransaction multiPermit;
    private final DecisionStatements statements;
    private final Executor asyncExecutor;
    private final ExecutorService ownedExecutor;
    private final List<ExpiryCleaner> cleaners = new CopyOnWriteArrayList<>();
    private final Batcher batcher;
    private final int maxQueued;
    private final AttemptLoop attempts;
    private final DatabaseHealth health = new DatabaseHealth();
    private final PostgresFailures failures;
    private final CallerWait waits;
    private final TimeBudget budget;
    private volatile boolean closed;

    private PostgresRateLimiter(Builder b) {
        this.budget = TimeBudget.of("RetryPolicy.budget", b.retryPolicy.budget());
        Pools.Resolved connections;
        try {
            connections = b.jdbcUrl != null ? Pools.own(b.jdbcUrl, b.threads, b.retryPolicy.budget())
                    : Pools.resolve(b.dataSource, b.threads, b.retryPolicy.budget());
        } catch (RuntimeException e) {
            if (e instanceof IllegalArgumentException) {
                throw e;
            }
            String where = b.jdbcUrl != null ? Pools.redact(b.jdbcUrl) : Pools.describe(b.dataSource);
            throw new PostgresStoreException("cannot connect to PostgreSQL at " + where + ": " + rootMessage(e)
                    + "; check that the database is up and the URL, user and password are right", null, e,
                    Degradation.UNAVAILABLE);
        }
        this.dataSource = connections.dataSource();
        this.ownedPool = connections.owned();
        this.where = connections.where();
        this.clock = b.ticker == null ? StoreClock.store() : StoreClock.client(b.ticker);
        this.schema = b.schema;
        this.prefix = b.prefix;
        this.retryPolicy = b.retryPolicy;
        this.sql = new Sql(schema, prefix);
        this.failures = new PostgresFailures(schema, prefix, b.retryPolicy.budget(), health);
        this.waits = new CallerWait(budget, health, failures);
        this.attempts = new AttemptLoop(dataSource, b.retryPolicy, budget, health, failures);
        this.multiPermit = new MultiPermitTransaction(sql, clock);
        this.statements = new DecisionStatements(sql, schema);
        this.maxQueued = b.maxQueued;
        this.batcher = b.maxBatchSize > 0
                ? new Batcher(b.maxBatchSize, b.concurrentBatches, b.maxQueued, this::sendBatch, failures::notSent) : null;
        if (b.asyncExecutor != null) {
            this.asyncExecutor = b.asyncExecutor;
            this.ownedExecutor = null;
        } else {
            AtomicInteger n = new AtomicInteger();
            // bounded: past maxQueued waiting decisions a call is rejected instead of queueing work that
            // could only run after its budget
            ThreadPoolExecutor pool = new ThreadPoolExecutor(b.threads, b.threads, 0L, TimeUnit.MILLISECONDS,
                    new LinkedBlockingQueue<>(b.maxQueued), r -> {
                        Thread t = new Thread(r, "sluice-postgres-" + n.incrementAndGet());
                        t.setDaemon(true);
                        return t;
                    });
            pool.prestartAllCoreThreads(); // no caller pays for starting a thread inside its budget
            this.ownedExecutor = pool;
            this.asyncExecutor = pool;
        }
        // Likewise the first failure: loading the failure path's classes costs a few ms once, which a caller
        // already at the end of its budget would pay on top of it (measured: 26 ms instead of 30-33 ms on the
        // first exhausted-pool decision at a 25 ms budget). Built and dropped here instead.
        failures.notSent("warm-up", new TimeoutException()).getStackTrace();
        try {
            warmUp(b.migrateIfMissing);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /** The budget of {@code create()}'s warm-up: a first connection and statement, on a cold server. */
    static final Duration WARM_UP_BUDGET = Duration.ofSeconds(10);

    /**
     * One real round trip before {@code create()} returns: the schema is there (created now if it is missing and
     * {@code migrateIfMissing}), the statement runs, the first connection is made; so the first caller's decision
     * pays for none of it. A peek: it writes nothing. Fails with what is wrong and where.
     */
    private void warmUp(boolean migrateIfMissing) {
        Limit probe = Limit.fixedWindow(1, Duration.ofSeconds(1));
        for (int round = 0; ; round++) {
            DecisionCall call = DecisionCall.maintenance(System.nanoTime() + WARM_UP_BUDGET.toNanos());
            try {
                attempts.run(null, probe, call, WARM_UP_BUDGET.toNanos(),
                        c -> statements.peek(c, "sluice:warm-up", probe, 1, now()));
                return;
            } catch (PostgresStoreException e) {
                if (round == 0 && migrateIfMissing && SCHEMA_MISSING.contains(String.valueOf(e.sqlState()))) {
                    migrate();
                    continue;
                }
                throw new PostgresStoreException("cannot use PostgreSQL at " + where + ": " + e.getMessage(),
                        e.sqlState(), e, e.degradation());
            }
        }
    }

    /** SQLSTATEs of a schema without Sluice's tables or functions: undefined table, function, schema. */
    private static final java.util.Set<String> SCHEMA_MISSING = java.util.Set.of("42P01", "42883", "3F000");

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t.getMessage() + ")";
    }

    /** A limiter on {@code dataSource} with the defaults: schema {@code public}, prefix {@code sluice_}, the database's clock. */
    public static PostgresRateLimiter create(DataSource dataSource) {
        return builder(dataSource).build();
    }

    public static Builder builder(DataSource dataSource) {
        return new Builder(Objects.requireNonNull(dataSource,
                "dataSource must not be null: give a DataSource, e.g. a HikariDataSource, or a JDBC URL"), null);
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
        return new Builder(null, Objects.requireNonNull(jdbcUrl,
                "jdbcUrl must not be null: e.g. jdbc:postgresql://localhost:5432/postgres?user=postgres"));
    }

    /** Configures a {@link PostgresRateLimiter}. */
    public static final class Builder {
        private final DataSource dataSource;
        private final String jdbcUrl;
        private boolean migrateIfMissing = true;
        private Ticker ticker;
        private String schema = Migrations.DEFAULT_SCHEMA;
        private String prefix = Migrations.DEFAULT_PREFIX;
        private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
        private Executor asyncExecutor;
        private int threads = DEFAULT_THREADS;
        private int maxBatchSize;
        private int concurrentBatches;
        private int maxQueued = DEFAULT_MAX_QUEUED_DECISIONS;

        private Builder(DataSource dataSource, String jdbcUrl) {
            this.dataSource = dataSource;
            this.jdbcUrl = jdbcUrl;
        }

        /**
         * Whether {@code build()} creates Sluice's tables and functions ({@link #migrate()}) when it finds them
         * missing; default true. With false, a missing schema fails {@code build()} with the fix.
         */
        public Builder migrateIfMissing(boolean migrate) {
            this.migrateIfMissing = migrate;
            return this;
        }

        /**
         * Decide with this client ticker (epoch nanoseconds) instead of the database's
         * {@code clock_timestamp()}. For tests and simulations: in production every instance must agree on
         * time, which only the database's clock guarantees.
         */
        public Builder ticker(Ticker t) {
            this.ticker = Objects.requireNonNull(t, "ticker must not be null: omit it to use the database's clock");
            return this;
        }

        /** The schema holding Sluice's tables and functions; default {@code public}. */
        public Builder schema(String name) {
            this.schema = Migrations.checkSchema(name);
            return this;
        }

        /** The prefix of every table and function name; default {@code sluice_}. */
        public Builder tablePrefix(String p) {
            this.prefix = Migrations.checkPrefix(p);
            return this;
        }

        /** Retries and time budget; default {@link RetryPolicy#DEFAULT}. */
        public Builder retryPolicy(RetryPolicy policy) {
            this.retryPolicy = Objects.requireNonNull(policy, "retryPolicy must not be null: e.g. RetryPolicy.DEFAULT");
            return this;
        }

        /**
         * Where every decision's blocking JDBC work runs (sync callers wait for it at most their budget);
         * default {@link #threads(int)} daemon threads with a queue of {@link #maxQueuedDecisions(int)}.
         * Bound your own executor's queue likewise (a decision that waited there past its budget fails
         * without being sent), and never give one that runs tasks on the calling thread: the caller would
         * then wait for the pool and the socket, unbounded by the budget.
         */
        public Builder asyncExecutor(Executor executor) {
            this.asyncExecutor = Objects.requireNonNull(executor, "asyncExecutor must not be null");
            return this;
        }

        /**
         * How many threads of the default executor run decisions' JDBC work, each holding one pooled
         * connection while it does; default {@value PostgresRateLimiter#DEFAULT_THREADS}. Set it to the
         * pool's maximum size: fewer threads leave connections idle, more wait for a connection.
         */
        public Builder threads(int n) {
            if (n < 1 || n > 1024) {
                throw new IllegalArgumentException("threads " + n + " must be between 1 and 1024: e.g. the pool's"
                        + " maximum size");
            }
            this.threads = n;
            return this;
        }

        /**
         * Batches concurrent token-bucket and GCRA decisions: up to {@code maxBatchSize} queued decisions go
         * to the database as one statement and one commit, from {@code concurrentBatches} dispatcher
         * threads (each holding one connection while its batch runs). Every decision stays exact; what
         * changes is throughput under concurrency (one commit for many decisions) and that a decision waits
         * for its batch. A lone caller is never delayed waiting for others. Off by default.
         */
        public Builder batching(int maxBatchSize, int concurrentBatches) {
            if (maxBatchSize < 1 || maxBatchSize > 10_000) {
                throw new IllegalArgumentException("maxBatchSize " + maxBatchSize + " must be between 1 and 10,000: e.g. 64");
            }
            if (concurrentBatches < 1 || concurrentBatches > 256) {
                throw new IllegalArgumentException("concurrentBatches " + concurrentBatches
                        + " must be between 1 and 256: e.g. half the pool size");
            }
            this.maxBatchSize = maxBatchSize;
            this.concurrentBatches = concurrentBatches;
            return this;
        }

        /**
         * How many decisions may wait at once in the default async executor's queue and, with
         * {@link #batching(int, int)}, in the batching queue; default
         * {@value PostgresRateLimiter#DEFAULT_MAX_QUEUED_DECISIONS}.
         * Past it a call is rejected at once with a {@link PostgresStoreException} saying the queue is
         * full (for {@code tryAcquireAsync}, as its future's failure), instead of queueing work that could
         * only run after its time budget.
         */
        public Builder maxQueuedDecisions(int max) {
            if (max < 1 || max > 1_000_000) {
                throw new IllegalArgumentException("maxQueuedDecisions " + max
                        + " must be between 1 and 1,000,000: e.g. 10,000");
            }
            this.maxQueued = max;
            return this;
        }

        public PostgresRateLimiter build() {
            return new PostgresRateLimiter(this);
        }
    }

    /** Counters since this limiter was built. */
    public record Stats(long decisions, long retries, long retriesExhausted) {
    }

    /**
     * Decisions made, retries taken after 40001/40P01, and decisions that gave up because the retry
     * policy ran out of attempts or time.
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

    // ------------------------------------------------------------------ migrations

    /**
     * Creates (or brings up to date) the tables, indexes and functions in the configured schema, in one
     * transaction. Idempotent and safe to call from several instances at once (they serialize on an
     * advisory lock where the database has them).
     */
    public void migrate() {
        checkOpen();
        Migrations.apply(dataSource, schema, prefix);
    }

    // ------------------------------------------------------------------ decisions

    @Override
    public Decision tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        checkKeyText(key);
        checkOpen();
        DecisionCall call = new DecisionCall(deadline());
        if (batcher != null && limit.algorithm().isTat()) {
            return waits.await(enqueue(key, limit, cost, -1, call), call, key, limit);
        }
        return waits.await(submit(key, limit, call, c -> statements.acquire(c, key, limit, cost, -1, now())), call, key, limit);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        checkKeyText(key);
        checkOpen();
        DecisionCall call = new DecisionCall(deadline()); // the budget starts now, queue included
        if (batcher != null && limit.algorithm().isTat()) {
            return waits.bounded(enqueue(key, limit, cost, -1, call), call, key, limit); // no thread blocks: the batch completes it
        }
        return waits.bounded(submit(key, limit, call, c -> statements.acquire(c, key, limit, cost, -1, now())), call, key, limit);
    }

    /** The deadline (System.nanoTime) of a decision asked for now. */
    private long deadline() {
        return budget.deadline();
    }

    /**
     * Runs {@code work} on a worker thread. The returned future may be completed by the caller first (its
     * budget ran out): the worker then skips the work, or, when it had already begun, finishes it bounded
     * by the same deadline and its result goes nowhere.
     */
    private <T> CompletableFuture<T> submit(String key, Limit limit, DecisionCall call, SqlCall<T> work) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            asyncExecutor.execute(() -> {
                if (f.isDone()) {
                    return; // its caller stopped waiting: nothing to send
                }
                try {
                    checkOpen();
                    f.complete(attempts.run(key, limit, call, work));
                } catch (RuntimeException | Error e) {
                    f.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            if (closed) {
                throw new IllegalStateException(CLOSED, e); // close() shut the executor down meanwhile
            }
            f.completeExceptionally(failures.notSent("the worker queue rejected the decision" + about(key, limit)
                    + (ownedExecutor != null ? ": its queue of " + maxQueued + " waiting decisions is full"
                    : " (" + e.getMessage() + ")") + ", so nothing was sent", e));
        }
        return f;
    }

    private CompletableFuture<Decision> enqueue(String key, Limit limit, long cost, long maxWaitNanos, DecisionCall call) {
        return batcher.submit(new Batcher.Request(key, limit, cost, maxWaitNanos, now(), call, new CompletableFuture<>()));
    }

    /** This call's time: the database's (it reads its clock) or the client ticker's now. */
    private StoreClock.Reading now() {
        return clock.read();
    }

    @Override
    public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        Algorithms.checkReserve(key, limit, cost, maxWait);
        checkKeyText(key);
        checkOpen();
        long maxWaitNanos = maxWait.toNanos();
        DecisionCall call = new DecisionCall(deadline());
        if (batcher != null) {
            return waits.await(enqueue(key, limit, cost, maxWaitNanos, call), call, key, limit);
        }
        return waits.await(submit(key, limit, call, c -> statements.acquire(c, key, limit, cost, maxWaitNanos, now())), call, key, limit);
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
        Permit.check(key, limit, cost);
        checkKeyText(key);
        checkOpen();
        DecisionCall call = new DecisionCall(deadline());
        return waits.await(submit(key, limit, call, c -> statements.peek(c, key, limit, cost, now())), call, key, limit);
    }

    @Override
    public void reset(String key, Limit limit) {
        Permit.checkKey(key);
        Objects.requireNonNull(limit, "limit must not be null: e.g. Limit.tokenBucket(10, Rate.perSecond(1))");
        checkKeyText(key);
        checkOpen();
        String statement = switch (Table.of(limit)) {
            case BUCKET -> sql.bucketReset;
            case WINDOW -> sql.windowReset;
            case LOG -> sql.logReset;
        };
        DecisionCall call = new DecisionCall(deadline());
        waits.await(submit(key, limit, call, c -> {
            try (PreparedStatement ps = c.prepare(statement)) {
                ps.setString(1, key);
                ps.setString(2, limit.id());
                ps.executeUpdate();
            }
            return null;
        }), call, key, limit);
    }

    /** One decision, one statement: {@code maxWaitNanos < 0} for tryAcquire, else a reserve. */
    private List<Decision> sendBatch(List<Batcher.Request> batch) {
        Batcher.Request first = batch.get(0);
        long deadline = first.call().deadlineNanos;
        for (Batcher.Request r : batch) {
            deadline = r.call().deadlineNanos - deadline < 0 ? r.call().deadlineNanos : deadline;
        }
        List<Decision> out = attempts.run(first.key(), first.limit(), new BatchCall(deadline, batch), c -> {
            // a request whose caller stopped waiting before the batch was sent is left out: it was told so
            List<Batcher.Request> live = new ArrayList<>(batch.size());
            for (Batcher.Request r : batch) {
                if (!r.call().abandoned) {
                    live.add(r);
                }
            }
            if (live.isEmpty()) {
                return java.util.Collections.nCopies(batch.size(), (Decision) null);
            }
            List<Decision> sent = live.size() == 1
                    ? List.of(statements.acquire(c, live.get(0).key(), live.get(0).limit(), live.get(0).cost(),
                            live.get(0).maxWaitNanos(), live.get(0).now()))
                    : statements.acquireMany(c, live);
            if (live.size() == batch.size()) {
                return sent;
            }
            List<Decision> all = new ArrayList<>(batch.size());
            int next = 0;
            for (Batcher.Request r : batch) {
                all.add(live.contains(r) ? sent.get(next++) : null);
            }
            return all;
        });
        attempts.decisions.add(batch.size() - 1L);
        return out;
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        Objects.requireNonNull(permits, "permits must not be null: give at least one Permit");
        if (permits.isEmpty()) {
            throw new IllegalArgumentException("permits is empty: give at least one Permit");
        }
        for (Permit p : permits) {
            Objects.requireNonNull(p, "permits must not contain null");
            Permit.check(p.key(), p.limit(), p.cost());
            checkKeyText(p.key());
        }
        checkOpen();
        if (permits.size() == 1) {
            Permit p = permits.get(0);
            return tryAcquire(p.key(), p.limit(), p.cost());
        }
        Permit first = permits.get(0);
        DecisionCall call = new DecisionCall(deadline());
        return waits.await(submit(first.key(), first.limit(), call, c -> multiPermit.acquireAll(c, permits)), call, first.key(),
                first.limit());
    }

    // ------------------------------------------------------------------ expiry

    /**
     * Starts a cleaner deleting expired rows every {@code interval}: 1,000 rows a batch, at most 10 batches
     * a sweep. Closing this limiter stops it.
     */
    public ExpiryCleaner cleaner(Duration interval) {
        return cleaner(interval, ExpiryCleaner.DEFAULT_BATCH_SIZE, ExpiryCleaner.DEFAULT_MAX_BATCHES);
    }

    /** Starts a cleaner with its own batch size and number of batches a sweep. */
    public ExpiryCleaner cleaner(Duration interval, int batchSize, int maxBatchesPerSweep) {
        checkOpen();
        ExpiryCleaner.checkInterval(interval);
        ExpiryCleaner cleaner = new ExpiryCleaner(this, batchSize, maxBatchesPerSweep);
        cleaners.add(cleaner);
        cleaner.start(interval);
        return cleaner;
    }

    /** A cleaner that is not scheduled: call {@link ExpiryCleaner#sweep()} yourself (tests, cron jobs). */
    public ExpiryCleaner manualCleaner(int batchSize, int maxBatchesPerSweep) {
        checkOpen();
        return new ExpiryCleaner(this, batchSize, maxBatchesPerSweep);
    }

    /** Deletes up to {@code batchSize} expired rows of one table; returns how many went. */
    int deleteExpired(Table table, int batchSize) {
        checkOpen();
        String statement = switch (table) {
            case BUCKET -> sql.bucketClean;
            case WINDOW -> sql.windowClean;
            case LOG -> sql.logClean;
        };
        DecisionCall call = DecisionCall.maintenance(System.nanoTime() + MAINTENANCE_BUDGET.toNanos());
        return attempts.run(null, null, call, MAINTENANCE_BUDGET.toNanos(), c -> {
            try (PreparedStatement ps = c.prepare(statement)) {
                StoreClock.Reading reading = clock.read();
                if (!reading.store()) {
                    ps.setLong(1, Math.floorDiv(reading.clientNanos(), 1000L) * 1000L);
                } else {
                    ps.setNull(1, Types.BIGINT);
                }
                ps.setInt(2, batchSize);
                return ps.executeUpdate();
            }
        });
    }

    void forget(ExpiryCleaner cleaner) {
        cleaners.remove(cleaner);
    }

    // ------------------------------------------------------------------ plumbing

    static String about(String key, Limit limit) {
        if (key == null) {
            return "";
        }
        return " for key \"" + abbreviate(key) + "\" under " + limit;
    }

    static String abbreviate(String key) {
        return key.length() <= 64 ? key : key.substring(0, 64) + "…";
    }


    /**
     * PostgreSQL {@code text} holds any Unicode string except one containing U+0000, and the driver
     * cannot send an unpaired UTF-16 surrogate (it has no UTF-8 form: it would be replaced, and two keys
     * could then share a bucket). Both are refused before anything is sent.
     */
    static void checkKeyText(String key) {
        for (int i = 0, n = key.length(); i < n; i++) {
            char ch = key.charAt(i);
            if (ch == 0) {
                throw new IllegalArgumentException("key \"" + abbreviate(key).replace("\0", "\\0")
                        + "\" contains a NUL character (U+0000) at index " + i
                        + ": PostgreSQL text cannot store it; remove it, or encode the key (e.g. hex or Base64) first");
            }
            if (Character.isHighSurrogate(ch) && i + 1 < n && Character.isLowSurrogate(key.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(ch)) {
                throw new IllegalArgumentException("key \"" + abbreviate(key) + "\" contains an unpaired UTF-16 surrogate"
                        + " (U+" + Integer.toHexString(ch).toUpperCase(java.util.Locale.ROOT) + ") at index " + i
                        + ": it has no UTF-8 form, so PostgreSQL cannot store it; pass well-formed Unicode");
            }
        }
    }

    boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(CLOSED);
        }
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
        if (batcher != null) {
            batcher.close();
        }
        for (ExpiryCleaner cleaner : cleaners) {
            cleaner.close();
        }
        cleaners.clear();
        if (ownedExecutor != null) {
            ownedExecutor.shutdown();
            try {
                if (!ownedExecutor.awaitTermination(retryPolicy.budget().toMillis() + 1000, TimeUnit.MILLISECONDS)) {
                    ownedExecutor.shutdownNow();
                }
            } catch (InterruptedException e) {
                ownedExecutor.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
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
