package dev.sluice.server.decision;

import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.store.Burst;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * One {@link Burst} per turn of a server's event loop: the decisions of every request the loop read in one turn go to
 * a remote store together (one batch where the store's policy allows) instead of one call each. Called by a
 * transport where it reads a request, on the loop's thread, before the request is decided; the burst ends in a task
 * of that loop, which runs once the turn's reads are done. Nothing waits for time or for more requests.
 */
public final class TurnBurst {
    private TurnBurst() {}

    /**
     * Whether bursts are worth opening for {@code service}'s store: not for the in-memory store, which decides in
     * place (nothing to send together), so that its path does not pay for them.
     */
    public static boolean worthIt(DecisionService service) {
        return !(service.limiter() instanceof InMemoryRateLimiter);
    }

    /** Opens a burst on this thread, {@code loop}'s, unless one is open; it ends in a task of {@code loop}. */
    public static void open(Executor loop) {
        if (!Burst.begin()) {
            return;
        }
        try {
            loop.execute(Burst::end);
        } catch (RejectedExecutionException e) {
            Burst.end(); // the loop is shutting down: nothing to hold the decisions for
        }
    }
}
