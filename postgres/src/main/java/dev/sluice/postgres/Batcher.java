package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
    record Request(String key, Limit limit, long cost, long maxWaitNanos, Long nowNanos, long deadlineNanos,
                   CompletableFuture<Decision> result) {
    }

    interface Sender {
        /** Decides a batch in one call, completing nothing; returns the decisions in request order. */
        List<Decision> send(List<Request> batch);
    }

    private static final Request POISON = new Request(null, null, 0, 0, null, 0, null);

    private final BlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    private final int maxBatch;
    private final Sender sender;
    private final List<Thread> dispatchers = new ArrayList<>();
    private volatile boolean closed;

    Batcher(int maxBatch, int dispatchers, Sender sender) {
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

    CompletableFuture<Decision> submit(Request r) {
        if (closed) {
            r.result().completeExceptionally(new IllegalStateException("this PostgresRateLimiter is closed: build a new one"));
            return r.result();
        }
        queue.add(r);
        return r.result();
    }

    /**
     * Waits for a submitted request; unwraps what the batch threw. The dispatchers enforce the request's
     * deadline (a request still queued at its deadline is failed, never sent, and a batch's statement
     * runs under the earliest deadline in it), so this wait is only a safety net, a second past it.
     */
    static Decision await(CompletableFuture<Decision> f, long budgetNanos) {
        try {
            return f.get(budgetNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PostgresStoreException("interrupted while waiting for a batched decision", null, e);
        } catch (TimeoutException e) {
            throw new PostgresStoreException("a batched decision ran past its time budget of "
                    + TimeUnit.NANOSECONDS.toMillis(budgetNanos) + " ms: the database is slow or down;"
                    + " raise RetryPolicy.budget or check the database", null, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException re) {
                throw re;
            }
            throw new PostgresStoreException("a batched decision failed: " + c, null, c);
        }
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
            if (first == POISON) {
                return;
            }
            batch.add(first);
            queue.drainTo(batch, maxBatch - 1);
            int poisons = 0;
            while (batch.remove(POISON)) {
                poisons++;
            }
            for (int i = 1; i < poisons; i++) {
                queue.add(POISON); // meant for the other dispatchers
            }
            boolean stop = poisons > 0;
            long now = System.nanoTime();
            batch.removeIf(r -> {
                if (now - r.deadlineNanos() < 0) {
                    return false;
                }
                r.result().completeExceptionally(new PostgresStoreException("a batched decision for key \""
                        + PostgresRateLimiter.abbreviate(r.key()) + "\" waited past its time budget before a"
                        + " connection was free: nothing was taken; the database is slow or the batches too few",
                        null, null));
                return true;
            });
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
            if (r != POISON) {
                r.result().completeExceptionally(new IllegalStateException("this PostgresRateLimiter is closed"));
            }
        }
    }
}
