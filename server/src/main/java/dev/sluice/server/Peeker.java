package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Evaluates a permit without consuming it: the service's check-only path ({@code hits: 0}) and the source of
 * per-descriptor detail after an all-or-nothing multi-descriptor decision.
 *
 * <p>{@link RateLimiter} has no such operation yet (core has been asked for {@code peek(key, limit, cost)}).
 * Until it has, {@link #of(RateLimiter)} finds a public {@code Decision peek(String, Limit, long)} on the store (a public class)
 * if it offers one, and otherwise returns null: the service then refuses {@code hits: 0} with a clear message
 * instead of guessing, because with only {@code tryAcquire} there is no way to look without taking.
 */
@FunctionalInterface
public interface Peeker {

    /**
     * The state of {@code key} under {@code limit} now, nothing consumed: {@code allowed} iff {@code cost} permits
     * are available; {@code remaining} and {@code resetAfter} describe the state as it is (not after taking
     * {@code cost}); {@code retryAfter} is what {@code tryAcquire(key, limit, cost)} would report.
     */
    Decision peek(String key, Limit limit, long cost);

    /** The store's own peek, or null when it has none. */
    static Peeker of(RateLimiter limiter) {
        if (limiter instanceof Peeker p) {
            return p;
        }
        try {
            MethodHandle h = MethodHandles.publicLookup().findVirtual(limiter.getClass(), "peek",
                    MethodType.methodType(Decision.class, String.class, Limit.class, long.class)).bindTo(limiter);
            return (key, limit, cost) -> {
                try {
                    return (Decision) h.invokeExact(key, limit, cost);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable t) {
                    throw new IllegalStateException(t);
                }
            };
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }
}
