package dev.sluice.store;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The one batching policy of the remote stores: many concurrent decisions of one limiter share one call of the store
 * (Redis: one {@code EVALSHA} of {@code batch.lua}; PostgreSQL: one statement and one commit). Only how a batch is
 * sent is the store's ({@link Sender}); when a decision goes, with whom, and what becomes of it while it waits is
 * decided here, the same for every store:
 *
 * <ul>
 * <li><b>Nothing waits for a batch to fill.</b> While fewer than {@code maxInFlight} calls of this limiter are at the
 *     store, a decision goes at once, alone. Otherwise it queues, and the next call to complete sends what is queued
 *     as one batch (at most {@code maxBatch}, in arrival order). So batches form only under concurrency.</li>
 * <li><b>A thread's burst goes together.</b> While the submitting thread has a {@link Burst} open (a server's event
 *     loop, for the requests it read in one turn) and a call of this limiter is at the store, a decision queues
 *     instead, and the burst's end sends what is queued as batches, as many as {@code maxInFlight} allows. With no
 *     call at the store it goes at once, as outside a burst: the store starts on it while the thread reads on.</li>
 * <li><b>A key is in one in-flight call at a time.</b> A decision whose key ({@link Member#batchKey()}) is in a call
 *     still at the store waits in the queue, even when fewer than {@code maxInFlight} calls are out, and goes with the
 *     batch sent after that call completes. So the decisions of one process on one key never race each other at the
 *     store (no two statements on one row in flight: their conflicts can only come from other processes), and a hot
 *     key's decisions go many to a call instead of one call each. Several decisions on one key may share a batch:
 *     the store decides them one after the other, in arrival order.</li>
 * <li><b>A decision's time budget runs while it is queued.</b> Its caller stops waiting at its deadline (the store's
 *     {@link TimeBudget} completes the member); a member done by then is left out of every batch: never sent.</li>
 * <li><b>The queue is bounded</b> ({@code maxQueued}): past it {@link #submit} refuses the decision at once, so that
 *     callers who keep calling while the store does not answer cannot fill the heap.</li>
 * <li><b>A batch that fails fails each of its members</b> as its own call would have failed: the sender answers each
 *     member (with its decision or its own error); a send that throws, or completes exceptionally, fails every member
 *     it left unanswered with that error ({@link Member#fail}).</li>
 * </ul>
 *
 * <p>The state is guarded by one lock, held only to pick a batch (never while a batch is sent or answered). Picking
 * skips the queued members whose key is in flight, so it reads at most the queued members that wait behind such a
 * key plus {@code maxBatch}.
 *
 * @param <M> a queued decision, as the store sends it
 */
public final class Batching<M extends Batching.Member> {

    /** One decision as the policy sees it. */
    public interface Member {
        /**
         * The state this decision reads and writes (e.g. the key and limit, or the store's key for them): members
         * with equal keys ({@link Object#equals}) are never in two calls at the store at once.
         */
        Object batchKey();

        /** Whether this decision's caller already has its answer (its budget ran out): it is then never sent. */
        boolean isDone();

        /** Fails this decision with {@code error}, unless it is done. */
        void fail(Throwable error);
    }

    /** How a store sends one batch: the only store-specific part of batching. */
    public interface Sender<M> {
        /**
         * Sends {@code batch} (one member or several, in arrival order) as one call of the store, and answers each
         * member. The stage completes when the store has answered the call (or the call failed): until then its keys
         * count as in flight. Must not block the calling thread on the store.
         */
        CompletionStage<?> send(List<M> batch);
    }

    /** What {@link #submit} did with a decision. */
    public enum Admission {
        /** Sent at once, or queued for a later batch: the sender or the caller's deadline answers it. */
        ACCEPTED,
        /** Not taken: {@code maxQueued} decisions are already waiting. The caller fails it as overloaded. */
        QUEUE_FULL
    }

    private final int maxInFlight;
    private final int maxBatch;
    private final int maxPerKey;
    private final int maxQueued;
    private final Sender<M> sender;

    private final Object lock = new Object();
    private final ArrayDeque<M> queue = new ArrayDeque<>();
    private final Set<Object> keysInFlight = new HashSet<>();
    private int inFlight;
    private @Nullable Throwable closed;

    /**
     * @param maxInFlight how many calls of this limiter may be at the store at once before decisions queue
     * @param maxBatch the most decisions in one call
     * @param maxQueued the most decisions that may wait for a batch
     */
    public Batching(int maxInFlight, int maxBatch, int maxQueued, Sender<M> sender) {
        this(maxInFlight, maxBatch, maxBatch, maxQueued, sender);
    }

    /**
     * With at most {@code maxPerKey} decisions of one key in one call (the rest of that key's wait for the next): for a
     * store whose call does a key's decisions one statement each (PostgreSQL), so that a hot key's call stays short.
     */
    public Batching(int maxInFlight, int maxBatch, int maxPerKey, int maxQueued, Sender<M> sender) {
        this.maxInFlight = check("maxInFlight", maxInFlight, 1, 256, "e.g. 6");
        this.maxBatch = check("maxBatchSize", maxBatch, 1, 10_000, "e.g. 64");
        this.maxPerKey = check("maxPerKey", maxPerKey, 1, maxBatch, "e.g. 16");
        this.maxQueued = check("maxQueued", maxQueued, 1, 1_000_000, "e.g. 10,000");
        this.sender = Objects.requireNonNull(sender, "sender");
    }

    private static int check(String what, int v, int min, int max, String example) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(
                    what + " " + v + " must be between " + min + " and " + max + ": " + example);
        }
        return v;
    }

    /**
     * Sends {@code m} at once, or queues it for a later batch (see the class comment). After {@link #close} it fails
     * {@code m} with close's error instead and returns {@link Admission#ACCEPTED} (it was answered).
     */
    public Admission submit(M m) {
        Burst burst = Burst.open();
        List<M> now;
        Throwable refused;
        boolean held;
        synchronized (lock) {
            refused = closed;
            if (refused == null) {
                if (queue.size() >= maxQueued) {
                    return Admission.QUEUE_FULL;
                }
                queue.add(m);
            }
            // in a burst, held while a call of this limiter is at the store; with none, sent at once: the store
            // starts on it while the thread reads the rest of its burst
            held = refused == null && burst != null && inFlight > 0;
            now = refused == null && !held ? take() : null;
        }
        if (refused != null) {
            m.fail(refused);
            return Admission.ACCEPTED;
        }
        if (held && burst != null) {
            burst.holds(this); // sent when the burst ends
            return Admission.ACCEPTED;
        }
        while (now != null) {
            now = send(now);
        }
        return Admission.ACCEPTED;
    }

    /** Sends what is queued, as many batches as the policy allows now (the end of a {@link Burst}). */
    void sendQueued() {
        List<M> next;
        while (true) {
            synchronized (lock) {
                next = closed == null ? take() : null;
            }
            if (next == null) {
                return;
            }
            while (next != null) {
                next = send(next);
            }
        }
    }

    /**
     * The next batch to send, or null: while fewer than {@code maxInFlight} calls are out, the queued members whose key
     * is not in flight, in arrival order, at most {@code maxBatch}; members already done are dropped. The batch's
     * keys and the call are counted in flight. Caller holds the lock.
     */
    private @Nullable List<M> take() {
        if (inFlight >= maxInFlight || queue.isEmpty()) {
            return null;
        }
        List<M> batch = null;
        ArrayDeque<M> waiting = null;
        Map<Object, Integer> perKey = null; // only with a cap per key
        M m;
        while ((batch == null || batch.size() < maxBatch) && (m = queue.poll()) != null) {
            if (m.isDone()) {
                continue;
            }
            Object key = m.batchKey();
            boolean full = false;
            if (maxPerKey < maxBatch && !keysInFlight.contains(key)) {
                if (perKey == null) {
                    perKey = new HashMap<>();
                }
                full = perKey.merge(key, 1, Integer::sum) > maxPerKey;
            }
            if (full || keysInFlight.contains(key)) {
                if (waiting == null) {
                    waiting = new ArrayDeque<>();
                }
                waiting.add(m); // after the call that holds its key
                continue;
            }
            if (batch == null) {
                batch = new ArrayList<>(Math.min(maxBatch, queue.size() + 1));
            }
            batch.add(m); // a key already in this batch is not in flight yet: its members share the call
        }
        if (waiting != null) {
            for (var it = waiting.descendingIterator(); it.hasNext(); ) {
                queue.addFirst(it.next()); // back at the head, in their order
            }
        }
        if (batch == null) {
            return null;
        }
        for (M b : batch) {
            keysInFlight.add(b.batchKey());
        }
        inFlight++;
        return batch;
    }

    /**
     * Sends a batch. When the store answers at once (a failure to send) the next batch is returned for the caller to
     * send, in a loop rather than a nested call.
     */
    private @Nullable List<M> send(List<M> batch) {
        CompletionStage<?> sent;
        try {
            sent = sender.send(batch);
        } catch (RuntimeException | Error e) {
            failAll(batch, e);
            return done(batch);
        }
        var f = sent.toCompletableFuture();
        if (f.isDone()) {
            if (f.isCompletedExceptionally()) {
                failAll(batch, f.handle((v, e) -> e).join());
            }
            return done(batch);
        }
        sent.whenComplete((v, e) -> {
            if (e != null) {
                failAll(batch, e);
            }
            List<M> next = done(batch);
            while (next != null) {
                next = send(next);
            }
        });
        return null;
    }

    private static <M extends Member> void failAll(List<M> batch, Throwable e) {
        for (M m : batch) {
            m.fail(e);
        }
    }

    /** A call is answered: its keys are free, and what waited for them (or for the call) may go. */
    private @Nullable List<M> done(List<M> batch) {
        synchronized (lock) {
            for (M m : batch) {
                keysInFlight.remove(m.batchKey());
            }
            inFlight--;
            return closed == null ? take() : null;
        }
    }

    /** Decisions waiting in the queue (for tests and metrics). */
    public int queued() {
        synchronized (lock) {
            return queue.size();
        }
    }

    /** Calls at the store now. */
    public int inFlight() {
        synchronized (lock) {
            return inFlight;
        }
    }

    /**
     * Sends nothing more: every queued decision, and every one submitted from now on, fails with {@code why}. Calls at
     * the store are answered as they complete.
     */
    public void close(Throwable why) {
        List<M> left;
        synchronized (lock) {
            if (closed != null) {
                return;
            }
            closed = Objects.requireNonNull(why, "why");
            left = new ArrayList<>(queue);
            queue.clear();
        }
        failAll(left, why);
    }
}
