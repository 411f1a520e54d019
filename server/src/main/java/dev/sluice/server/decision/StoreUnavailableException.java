package dev.sluice.server.decision;

/**
 * The store did not answer within the per-request budget, failed, or is overloaded. HTTP answers 503 with
 * {@code Retry-After: 1}; gRPC answers {@code UNAVAILABLE} (Envoy then applies its {@code failure_mode_deny}).
 * The store's own failure policy (fail open, fail closed, local fallback) runs inside the store, before this.
 */
public final class StoreUnavailableException extends RuntimeException {
    private final String type;

    public StoreUnavailableException(String type, String message, Throwable cause) {
        super(message, cause, false, false);
        this.type = type;
    }

    /** {@code store-timeout}, {@code store-error} or {@code store-overloaded}. */
    public String type() {
        return type;
    }
}
