package dev.sluice.postgres;

import dev.sluice.Scheduler;
import dev.sluice.Ticker;
import dev.sluice.store.StoreClock;
import java.util.Objects;
import java.util.concurrent.Executor;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The options of a {@link PostgresRateLimiter.Builder}, kept apart from the limiter (its only subclass is that
 * builder, through which they are set: {@code PostgresRateLimiter.builder(ds).threads(16).build()}).
 */
abstract class PostgresOptions<B extends PostgresOptions<B>> {
    /** One of the two is given: a DataSource, or a URL for a pool of the limiter's own. */
    final @Nullable DataSource dataSource;

    final @Nullable String jdbcUrl;
    boolean migrateIfMissing = true;
    StoreClock clock = StoreClock.store();
    String schema = Migrations.DEFAULT_SCHEMA;
    String prefix = Migrations.DEFAULT_PREFIX;
    RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    /** Null: a pool of {@code threads} of the limiter's own. */
    @Nullable
    Executor asyncExecutor;

    int threads = PostgresRateLimiter.DEFAULT_THREADS;
    int maxBatchSize = PostgresRateLimiter.DEFAULT_MAX_BATCH_SIZE;
    int concurrentBatches; // 0: a quarter of the threads
    int maxQueued = PostgresRateLimiter.DEFAULT_MAX_QUEUED_DECISIONS;
    Scheduler scheduler = Scheduler.system();

    PostgresOptions(@Nullable DataSource dataSource, @Nullable String jdbcUrl) {
        this.dataSource = dataSource;
        this.jdbcUrl = jdbcUrl;
    }

    /**
     * Whether {@code build()} creates Sluice's tables and functions ({@link PostgresRateLimiter#migrate()}) when it finds them
     * missing; default true. With false, a missing schema fails {@code build()} with the fix.
     */
    public B migrateIfMissing(boolean migrate) {
        this.migrateIfMissing = migrate;
        return self();
    }

    /**
     * Decide with this client ticker (epoch nanoseconds) instead of the database's
     * {@code clock_timestamp()}. For tests and simulations: in production every instance must agree on
     * time, which only the database's clock guarantees.
     */
    public B ticker(Ticker t) {
        this.clock = StoreClock.client(
                Objects.requireNonNull(t, "ticker must not be null: omit it to use the database's clock"));
        return self();
    }

    /** The schema holding Sluice's tables and functions; default {@code public}. */
    public B schema(String name) {
        this.schema = Migrations.checkSchema(name);
        return self();
    }

    /** The prefix of every table and function name; default {@code sluice_}. */
    public B tablePrefix(String p) {
        this.prefix = Migrations.checkPrefix(p);
        return self();
    }

    /** Retries and time budget; default {@link RetryPolicy#DEFAULT}. */
    public B retryPolicy(RetryPolicy policy) {
        this.retryPolicy = Objects.requireNonNull(policy, "retryPolicy must not be null: e.g. RetryPolicy.DEFAULT");
        return self();
    }

    /**
     * Where the blocking JDBC work runs (sync callers wait for it at most their budget) of every decision that is not
     * batched (window algorithms, peeks, resets, multi-permits; all of them with {@code batching(false)});
     * default {@link #threads(int)} daemon threads with a queue of {@link #maxQueuedDecisions(int)}.
     * Bound your own executor's queue likewise (a decision that waited there past its budget fails
     * without being sent), and never give one that runs tasks on the calling thread: the caller would
     * then wait for the pool and the socket, unbounded by the budget.
     */
    public B asyncExecutor(Executor executor) {
        this.asyncExecutor = Objects.requireNonNull(executor, "asyncExecutor must not be null");
        return self();
    }

    /**
     * How many threads of the default executor run decisions' JDBC work, each holding one pooled
     * connection while it does; default {@value PostgresRateLimiter#DEFAULT_THREADS}. Set it to the
     * pool's maximum size: fewer threads leave connections idle, more wait for a connection.
     */
    public B threads(int n) {
        if (n < 1 || n > 1024) {
            throw new IllegalArgumentException(
                    "threads " + n + " must be between 1 and 1024: e.g. the pool's" + " maximum size");
        }
        this.threads = n;
        return self();
    }

    /**
     * How concurrent token-bucket and GCRA decisions are batched (on by default: 64 a statement, from a quarter as
     * many dispatcher threads as {@link #threads(int)}): up to {@code maxBatchSize} queued decisions go to the
     * database as one statement and one commit, from {@code concurrentBatches} dispatcher threads (each holding
     * one pooled connection while its batch runs). Every decision stays exact and decided in arrival order per
     * key; what changes is throughput under concurrency (one round trip and one commit for many decisions). A lone
     * caller is never delayed waiting for others: its batch is its own request, sent at once.
     */
    public B batching(int maxBatchSize, int concurrentBatches) {
        if (maxBatchSize < 1 || maxBatchSize > 10_000) {
            throw new IllegalArgumentException(
                    "maxBatchSize " + maxBatchSize + " must be between 1 and 10,000: e.g. 64");
        }
        if (concurrentBatches < 1 || concurrentBatches > 256) {
            throw new IllegalArgumentException(
                    "concurrentBatches " + concurrentBatches + " must be between 1 and 256: e.g. half the pool size");
        }
        this.maxBatchSize = maxBatchSize;
        this.concurrentBatches = concurrentBatches;
        return self();
    }

    /**
     * {@code false}: every decision is its own statement and commit on a worker thread (the behaviour before batching
     * was the default), as many at once as there are workers, but a row (key and limit) in one statement at a time: a
     * hot key's decisions go one after the other. {@code true}: the default batching.
     */
    public B batching(boolean batching) {
        this.maxBatchSize = batching ? PostgresRateLimiter.DEFAULT_MAX_BATCH_SIZE : 0;
        this.concurrentBatches = 0;
        return self();
    }

    /**
     * How many decisions may wait at once in the default async executor's queue and, with
     * {@link #batching(int, int)}, in the batching queue; default
     * {@value PostgresRateLimiter#DEFAULT_MAX_QUEUED_DECISIONS}.
     * Past it a call is rejected at once with a {@link PostgresStoreException} saying the queue is
     * full (for {@code tryAcquireAsync}, as its future's failure), instead of queueing work that could
     * only run after its time budget.
     */
    public B maxQueuedDecisions(int max) {
        if (max < 1 || max > 1_000_000) {
            throw new IllegalArgumentException(
                    "maxQueuedDecisions " + max + " must be between 1 and 1,000,000: e.g. 10,000");
        }
        this.maxQueued = max;
        return self();
    }

    /**
     * Where this limiter's threads come from (the workers', {@code sluice-postgres-<n>}, the batch dispatchers',
     * {@code sluice-postgres-batch-<n>}, {@code sluice-postgres-slots-<n>} and {@code sluice-postgres-multi-<n>}, the
     * cancels', {@code sluice-postgres-cancel-<n>}, and the cleaners', {@code sluice-postgres-cleaner-<n>}):
     * {@link Scheduler#threadFactory}; and the clock and timer of the cleaners' intervals, the pauses between cancels,
     * the backoff between conflict retries and the backoff of the pool's logins after a refused one (a
     * {@code ManualScheduler} lets a test drive them); default {@link Scheduler#system()}.
     * Give {@code Scheduler.system(yourThreadFactory)} to name or group them as the application does.
     */
    public B scheduler(Scheduler scheduler) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler must not be null: e.g. Scheduler.system()");
        return self();
    }

    /** The builder itself, for chaining. */
    abstract B self();
}
