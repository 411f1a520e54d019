package dev.sluice.store;

import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Decisions one thread asks for in a burst, sent to their store together when the burst ends. A server's event loop
 * reads many requests in one turn (every connection that had data); without a burst each of their decisions would
 * go to a remote store at once and alone while the store has room ({@link Batching}), so under load a Redis or
 * PostgreSQL store would see one call per request. Inside a burst, while a call of the limiter is at the store,
 * {@link Batching#submit} queues the decision instead, and {@link #end} sends what the burst queued as few batches
 * as the policy allows: one call of the store for the rest of the turn, when it fits (with no call at the store a
 * decision goes at once: an idle store is not kept waiting). Nothing waits for time: the burst ends when the thread
 * has read what was ready.
 *
 * <p>A thread opens a burst with {@link #begin} (true when this call opened it; nested calls change nothing) and
 * must end it on the same thread: a server opens it where it reads a request and ends it in a task its event loop
 * runs after that turn's reads. A thread that would wait for a decision it asked for inside its own burst must end
 * the burst first ({@link #endNow}): the synchronous views do so before they wait ({@link TimeBudget#await},
 * {@link Futures#join}). Stores that decide in place (in memory) are not touched.
 */
public final class Burst {
    private static final ThreadLocal<Burst> OF_THREAD = ThreadLocal.withInitial(Burst::new);

    private boolean open;
    /** The batching policies holding decisions of this burst, in the order they first held one. */
    private final List<Batching<?>> holding = new ArrayList<>(2);

    private Burst() {}

    /**
     * Opens a burst on this thread. True when this call opened it: the caller must then {@link #end} it on this
     * thread; false when one is open already (its opener ends it).
     */
    public static boolean begin() {
        Burst b = OF_THREAD.get();
        if (b.open) {
            return false;
        }
        b.open = true;
        return true;
    }

    /** Ends this thread's burst, if one is open, sending every decision it held. */
    public static void end() {
        Burst b = OF_THREAD.get();
        if (!b.open) {
            return;
        }
        b.open = false;
        int n = b.holding.size();
        if (n == 0) {
            return;
        }
        // taken off the burst before sending: a sender that answers at once may lead this thread to ask again (then
        // the decision goes as without a burst) or even to open a burst of its own, which its opener ends
        if (n == 1) {
            Batching<?> only = b.holding.remove(0);
            only.sendQueued();
            return;
        }
        Batching<?>[] held = b.holding.toArray(new Batching<?>[0]);
        b.holding.clear();
        for (Batching<?> h : held) {
            h.sendQueued();
        }
    }

    /** Sends what this thread's burst holds before the thread waits for a decision; the burst stays open. */
    public static void endNow() {
        Burst b = OF_THREAD.get();
        if (b.open) {
            end();
            b.open = true;
        }
    }

    /** This thread's open burst, or null. */
    static @Nullable Burst open() {
        Burst b = OF_THREAD.get();
        return b.open ? b : null;
    }

    /** {@code batching} holds a decision of this burst. */
    void holds(Batching<?> batching) {
        for (int i = 0; i < holding.size(); i++) {
            if (holding.get(i) == batching) {
                return;
            }
        }
        holding.add(batching);
    }
}
