package dev.sluice;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A remote store could not decide. {@link #degradation()} says how it failed (timed out, unreachable,
 * overloaded, answered with an error, refused this client's configuration), which is what
 * {@code FailSafeRateLimiter} applies its {@code FailurePolicy} to and what it counts. Each store's own exception extends this one and its message
 * names the store's address or key and what to do.
 */
public class StoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Degradation degradation;

    public StoreException(String message, @Nullable Throwable cause, Degradation degradation) {
        super(message, cause);
        this.degradation = Objects.requireNonNull(degradation, "degradation");
        if (degradation == Degradation.NONE) {
            throw new IllegalArgumentException("a StoreException needs a cause other than NONE");
        }
    }

    /** How the store failed; never {@link Degradation#NONE}. */
    public Degradation degradation() {
        return degradation;
    }
}
