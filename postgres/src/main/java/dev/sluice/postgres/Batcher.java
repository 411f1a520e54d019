package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.store.StoreClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Coalesces concurrent token-bucket / GCRA decisions into one statement ({@code sluice_bucket_acquire_many}):
 * one round trip and one commit for a whole batch, the way past the one-statement-per-decision ceiling.
 *
 * <p>Callers put a request on a queue and wait for its decision; {@code dispatchers} threads each take
 * what is queued (at most {@code maxBatch}), send it as one call, and hand every caller its own decision.
 * Nothing waits for a batch to fill: a lone caller's batch is its own request alone, sent at once, so
 * batching only appears when calls are concurrent. Each decision is still exact: the SQL decides the
 * elements one by one, those naming the same key and limit in arrival order, and the Java side runs
 * the pure step on what each one found, as for a single call. A failed batch (after the retry policy)
 * fails every request in it, and none of them took anything: the batch commits or rolls back whole.
 */
final class Batcher implements AutoCloseable {

    /** One queued decision; {@code maxWaitNanos < 0} for tryAcquire. */
    record Request(
            String key,
            Limit limit,
            long cost,
            long maxWaitNanos,
            StoreClock.Reading now,
            DecisionCall call,
            CompletableFuture<Decision> result) {}

    /** Builds the failure of a request that was not sent (queue full, or its budget passed while queued). */
    interface NotSent {
        PostgresStoreException failure(String what, @Nullable Throwable cause);
    }

    interface Sender {
        /** Decides a batch in one call, completing nothing; returns the decisions in request order. */
        List<Decision> send(List<Request> batch);
    }

    /** Tells a dispatcher to stop; told apart by identity ({@link #isPoison}), never sent. */
    private static final Request POISON = new Request(
            "",
            Limit.fixedWindow(1, Duration.ofSeconds(1)),
            1,
            -1,
            StoreClock.Reading.STORE,
            new DecisionCall(0),
            new CompletableFuture<>());

    @SuppressWarnings("ReferenceEquality") // the marker itself, not a request equal to it
    private static boolean isPoison(Request r) {
        return r == POISON;
    }

    private final BlockingQueue<Request> queue;
    /** Requests queued and not yet taken by a dispatcher (the queue also holds close()'s markers). */
    private final AtomicInteger pending = new AtomicInteger();

    private final int maxQueued;
    private final int maxBatch;
    private final Sender sender;
    private final NotSent notSent;
    private final List<Thread> dispatchers = new ArrayList<>();
    private volatile boolean closed;

    Batcher(int maxBatch, int dispatchers, int maxQueued, Sender sender, NotSent notSent) {
        this(maxBatch, dispatchers, maxQueued, sender, notSent, new LinkedBlockingQueue<>());
    }

    /** With a queue of the caller's: tests use one that stalls an {@code add} to open a race window. */
    Batcher(
            int maxBatch,
            int dispatchers,
            int maxQueued,
            Sender sender,
            NotSent notSent,
            BlockingQueue<Request> queue) {
        this.queue = queue;
        this.notSent = notSent;
        this.maxQueued = maxQueued;
        if (maxBatch < 1 || maxBatch > 10_000) {
            throw new IllegalArgumentException("maxBatchSize " + maxBatch + " must be between 1 and 10,000: e.g. 64");
        }
        if (dispatchers < 1 || dispatchers > 256) {
            throw new IllegalArgumentException("concurrent batches " + dispatchers
                    + " must be between 1 and 256: e.g. a quarter of the pool size");
        }
        this.maxBatch = maxBatch;
        this.sender = sender;
        for (int i = 0; i < dispatchers; i++) {
            Thread t = new Thread(this::dispatch, "sluice-postgres-batch-" + (i + 1));
            t.setDaemon(true);
            this.dispatchers.add(t);
            t.start();
        }
    }

    /**
     * Queues a request; its future completes with the decision, or exceptionally. After {@link #close()}
     * (also when close runs while this call is under way) it completes with an
     * {@link IllegalStateException}: no request is ever left in the queue without a dispatcher to answer it.
     */
    CompletableFuture<Decision> submit(Request r) {
        if (closed) {
            r.result().completeExceptionally(closedException());
            return r.result();
        }
        if (pending.incrementAndGet() > maxQueued) {
            pending.decrementAndGet();
            r.result()
                    .completeExceptionally(notSent.failure(
                            "the batching queue is full: " + maxQueued
                                    + " decisions are waiting, so nothing was sent for key \""
                                    + Permit.abbreviate(r.key())
                                    + "\" (raise concurrentBatches with the pool size)",
                            null));
            return r.result();
        }
        queue.add(r);
        // close() may have drained the queue between the check above and the add: then nobody would take
        // r. close() sets closed before it drains, so if closed reads false here the drain (or a
        // dispatcher) still sees r; if it reads true, whoever removes r answers it (a dispatcher decides
        // it, close() or this call fails it)
        if (closed && queue.remove(r)) {
            pending.decrementAndGet();
            r.result().completeExceptionally(closedException());
        }
        return r.result();
    }

    static IllegalStateException closedException() {
        return new IllegalStateException(PostgresRateLimiter.CLOSED);
    }

    private void dispatch() {
        List<Request> batch = new ArrayList<>(maxBatch);
        while (true) {
            Request first;
            try {
                first = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (isPoison(first)) {
                return;
            }
            batch.add(first);
            queue.drainTo(batch, maxBatch - 1);
            int taken = batch.size();
            batch.removeIf(Batcher::isPoison);
            int poisons = taken - batch.size();
            pending.addAndGet(-batch.size());
            for (int i = 1; i < poisons; i++) {
                queue.add(POISON); // meant for the other dispatchers
            }
            boolean stop = poisons > 0;
            // a caller stops waiting (its future fails) when its budget and its patience are spent: while the
            // database answers others, a decision waiting for a dispatcher is queueing, not failing
            batch.removeIf(r -> r.result().isDone());
            if (batch.isEmpty()) {
                if (stop) {
                    return;
                }
                continue;
            }
            try {
                List<Decision> decisions = sender.send(batch);
                for (int i = 0; i < batch.size(); i++) {
                    batch.get(i).result().complete(decisions.get(i));
                }
            } catch (RuntimeException | Error e) {
                for (Request r : batch) {
                    r.result().completeExceptionally(e);
                }
            }
            batch.clear();
            if (stop) {
                return;
            }
        }
    }

    /** Lets the dispatchers finish what is queued, then stops them. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int i = 0; i < dispatchers.size(); i++) {
            queue.add(POISON);
        }
        for (Thread t : dispatchers) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        Request r;
        while ((r = queue.poll()) != null) {
            if (!isPoison(r)) {
                r.result().completeExceptionally(closedException());
            }
        }
    }
}
