package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.store.Batching;
import dev.sluice.store.StoreClock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Coalesces concurrent token-bucket / GCRA decisions into one statement ({@code sluice_bucket_acquire_many}, or
 * {@code sluice_bucket_batch} when a reservation's estimate or settle is among them), and, in batchers of their own,
 * the steps of work in flight ({@code sluice_in_flight_many}) and multi-permit requests (one transaction,
 * {@link MultiPermitTransaction#acquireEach}): one round trip (a transaction) and one commit for a whole batch, the
 * way past the one-statement-per-decision ceiling. The PostgreSQL part of the stores' one batching policy
 * ({@link Batching}: a request goes alone at once while fewer than {@code concurrentBatches} statements of this
 * batcher are at the database and its row is in none of them; otherwise it queues and the next statement to complete
 * sends what is queued, up to {@code maxBatch}, as one). What a batch's statement is, is its {@link Sender}'s
 * ({@link BatchSend}).
 *
 * <p>A row (key and limit; a key's slots) is in one statement at a time: the decisions of this process on one hot
 * key never wait for each other's row lock or conflict with each other under SERIALIZABLE; they go many to a
 * statement. Each
 * decision is still exact: the SQL decides the elements one by one, those naming the same key and limit in arrival
 * order, and the Java side runs the pure step on what each one found, as for a single call. A failed batch (after the
 * retry policy) fails every request in it, and none of them took anything: the batch commits or rolls back whole.
 *
 * <p>The blocking JDBC work of a batch runs on one of {@code concurrentBatches} dispatcher threads (the policy never
 * has more batches out, so none waits for a thread), made by the limiter's {@link dev.sluice.Scheduler}'s thread
 * factory ({@code sluice-postgres-batch-<n>}, for slots {@code sluice-postgres-slots-<n>}, for multi-permit requests
 * {@code sluice-postgres-multi-<n>}, by default).
 */
final class Batcher<R extends Batcher.Queued> implements AutoCloseable {

    /**
     * What core's batching queues here: a request on one row (its {@link Batching.Member#batchKey()}), answered
     * through its future, whose failures name its key (and limit, when it has one). A token-bucket or GCRA decision,
     * estimate or settle ({@link Request}), a step of work in flight ({@link InFlightStatements.Step}), a multi-permit
     * request ({@link MultiPermitTransaction.Request}, on several rows: its batch key is its own), or a statement
     * waiting for a worker ({@link Workers#submitOnRow}).
     */
    interface Queued extends Batching.Member {
        String key();

        /** The limit failures name, or null (work in flight has none). */
        @Nullable
        Limit limit();

        DecisionCall call();

        CompletableFuture<?> result();

        @Override
        default boolean isDone() {
            return result().isDone();
        }

        @Override
        default void fail(Throwable error) {
            result().completeExceptionally(error);
        }

        /** Completes the request with its answer: what its caller gets, or the exception it gets. */
        @SuppressWarnings("unchecked") // the answer is of the type the request's future was made for
        default void answer(Object answer) {
            if (answer instanceof RuntimeException e) {
                result().completeExceptionally(e);
            } else {
                ((CompletableFuture<Object>) result()).complete(answer);
            }
        }
    }

    /**
     * One queued decision; {@code maxWaitNanos < 0} for tryAcquire. With a {@code reservation}, a
     * {@code tryAcquireEstimate} of {@code cost} (its {@code result} a {@code Decision}'s future) or a {@code settle} at
     * {@code cost} (a {@code Settlement}'s).
     */
    record Request(
            String key,
            Limit limit,
            long cost,
            long maxWaitNanos,
            StoreClock.Reading now,
            DecisionCall call,
            @Nullable Reservation reservation,
            CompletableFuture<?> result)
            implements Table.RowDecision {

        /** A decision's request. */
        Request(
                String key,
                Limit limit,
                long cost,
                long maxWaitNanos,
                StoreClock.Reading now,
                DecisionCall call,
                CompletableFuture<Decision> result) {
            this(key, limit, cost, maxWaitNanos, now, call, null, result);
        }
    }

    /** What makes a request a reservation's: its id and, for an estimate, its {@code settleWithin}. */
    record Reservation(String id, long withinNanos, boolean settle) {}

    /** Builds the failure of a request that was not sent (queue full, or its budget passed while queued). */
    interface NotSent {
        PostgresStoreException failure(String what, @Nullable Throwable cause);
    }

    interface Sender<R> {
        /**
         * Decides a batch in one call, completing nothing; returns the answers in request order (see {@link
         * Queued#answer}), null for a request not sent.
         */
        List<@Nullable Object> send(List<R> batch);
    }

    private final int maxQueued;
    private final Sender<R> sender;
    private final NotSent notSent;
    private final ExecutorService dispatchers;
    private final Batching<R> batching;

    Batcher(int maxBatch, int dispatchers, int maxQueued, Sender<R> sender, NotSent notSent, ThreadFactory threads) {
        if (maxBatch < 1 || maxBatch > 10_000) {
            throw new IllegalArgumentException("maxBatchSize " + maxBatch + " must be between 1 and 10,000: e.g. 64");
        }
        if (dispatchers < 1 || dispatchers > 256) {
            throw new IllegalArgumentException("concurrent batches " + dispatchers
                    + " must be between 1 and 256: e.g. a quarter of the pool size");
        }
        this.notSent = notSent;
        this.maxQueued = maxQueued;
        this.sender = sender;
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                dispatchers, dispatchers, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), threads);
        pool.prestartAllCoreThreads(); // no caller pays for starting a thread inside its budget
        this.dispatchers = pool;
        // a key's decisions are one statement each in the batch's function: a quarter of the batch at most, so that a
        // hot key's batch stays as short as the batches that shared it before a key was in one batch at a time
        this.batching = new Batching<>(dispatchers, maxBatch, Math.max(1, maxBatch / 4), maxQueued, this::dispatch);
    }

    /**
     * The batcher of a limiter built with {@code b}, or null without batching: its {@code concurrentBatches}
     * dispatcher threads from the limiter's scheduler's thread factory, named {@code sluice-<name>-<n>} by default.
     */
    static <R extends Queued> @Nullable Batcher<R> of(
            PostgresOptions<?> b, Sender<R> sender, NotSent notSent, String name) {
        if (b.maxBatchSize <= 0) {
            return null;
        }
        // a quarter of the threads: fewer, fuller batches share more of each commit (measured: bench/README.md)
        int concurrentBatches = b.concurrentBatches > 0 ? b.concurrentBatches : Math.max(1, b.threads / 4);
        return new Batcher<>(
                b.maxBatchSize, concurrentBatches, b.maxQueued, sender, notSent, b.scheduler.threadFactory(name));
    }

    /**
     * Queues a request; its future completes with the decision, or exceptionally. After {@link #close()} (also when
     * close runs while this call is under way) it completes with an {@link IllegalStateException}.
     */
    void submit(R r) {
        if (batching.submit(r) == Batching.Admission.QUEUE_FULL) {
            r.result()
                    .completeExceptionally(notSent.failure(
                            "the batching queue is full: " + maxQueued
                                    + " calls are waiting, so nothing was sent for key \""
                                    + Permit.abbreviate(r.key())
                                    + "\" (raise concurrentBatches with the pool size)",
                            null));
        }
    }

    static IllegalStateException closedException() {
        return new IllegalStateException(PostgresRateLimiter.CLOSED);
    }

    /** One batch on a dispatcher thread: sent, then each request answered (a failure fails each). */
    private CompletableFuture<?> dispatch(List<R> batch) {
        try {
            return send(batch);
        } catch (RejectedExecutionException e) { // close() stopped the dispatchers (their queue is unbounded)
            IllegalStateException closed = closedException();
            closed.initCause(e);
            for (R r : batch) {
                r.result().completeExceptionally(closed);
            }
            return CompletableFuture.failedFuture(closed);
        }
    }

    private CompletableFuture<?> send(List<R> batch) {
        return CompletableFuture.runAsync(
                () -> {
                    List<@Nullable Object> answers = sender.send(batch);
                    for (int i = 0; i < batch.size(); i++) {
                        Object answer = answers.get(i);
                        if (answer != null) {
                            batch.get(i).answer(answer);
                        }
                    }
                },
                dispatchers);
    }

    /** Lets the batches under way finish, fails what is queued, and stops the dispatchers. */
    @Override
    public void close() {
        batching.close(closedException());
        dispatchers.shutdown();
        try {
            if (!dispatchers.awaitTermination(10, TimeUnit.SECONDS)) {
                dispatchers.shutdownNow();
            }
        } catch (InterruptedException e) {
            dispatchers.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
