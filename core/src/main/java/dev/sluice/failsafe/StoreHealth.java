package dev.sluice.failsafe;

import dev.sluice.Degradation;
import dev.sluice.RateLimiter;
import java.util.Optional;

/**
 * How the remote store behind a limiter is doing, as the {@link FailurePolicy} in front of it sees it: whether the
 * store decides, and if not why ({@link #cause()}), the policy deciding instead and how many decisions it made, by
 * cause. A live view: every call reads the state of the moment, and reading it calls no store.
 *
 * <p>{@link FailSafeRateLimiter} provides one. A limiter that wraps another ({@code LeasedRateLimiter}, any limiter
 * that forwards to a store) is a {@link Source} that returns the view of what it wraps, so that whatever reports
 * health (a service's readiness probe, its metrics, a dashboard) asks the outermost limiter once,
 * {@link #of(RateLimiter)}, and never looks through wrappers itself. A limiter with no policy in front of a store
 * (the in-memory store, a store used bare) has none: it answers or throws.
 *
 * <p>Causes are iterated, not listed: a reporter writes {@link #degradedCount(Degradation)} for each value of
 * {@link Degradation} but {@code NONE}, so a cause added to that enum appears in every report.
 */
public interface StoreHealth {

    /**
     * {@link Degradation#NONE} while the store decides; otherwise why the policy decides instead: the cause that
     * opened the circuit (calls in a row timed out or could not reach the store), or, while the store has not been
     * opened yet, why the last attempt to open it failed.
     */
    Degradation cause();

    /** Whether decisions come from the store now: it is open and its circuit closed ({@code cause() == NONE}). */
    default boolean healthy() {
        return cause() == Degradation.NONE;
    }

    /**
     * Whether the store has been opened since the limiter was built. False only for a store that was down (or not
     * reachable) when its limiter was built and has not answered since: it is being opened in the background.
     */
    boolean opened();

    /** What decides while the store cannot. */
    FailurePolicy policy();

    /** Decisions the policy made instead of the store because of {@code cause}, since the limiter was built. */
    long degradedCount(Degradation cause);

    /** A limiter that can tell how the store behind it is doing: a failure policy, or a wrapper around one. */
    interface Source {
        /** The health of the store behind this limiter, or empty when no failure policy stands in front of it. */
        Optional<StoreHealth> storeHealth();
    }

    /**
     * The health of the store behind {@code limiter}, however it is wrapped (each wrapper forwards what it wraps);
     * empty for a limiter with no failure policy in front of its store.
     */
    static Optional<StoreHealth> of(RateLimiter limiter) {
        return limiter instanceof Source s ? s.storeHealth() : Optional.empty();
    }
}
