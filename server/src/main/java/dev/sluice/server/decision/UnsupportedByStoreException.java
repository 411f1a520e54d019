package dev.sluice.server.decision;

/**
 * The store does not implement an operation the request needs (today: a store whose
 * {@link dev.sluice.RateLimiter#peek(String, dev.sluice.Limit, long)} still throws
 * {@link UnsupportedOperationException}, asked for a check-only decision). HTTP answers 501 with a problem naming
 * the store; gRPC answers {@code UNIMPLEMENTED}. Every store in this build implements peek, so this is a fallback
 * for stores of other builds.
 */
public final class UnsupportedByStoreException extends RuntimeException {
    private final String type;

    public UnsupportedByStoreException(String type, String message, Throwable cause) {
        super(message, cause, false, false);
        this.type = type;
    }

    /** {@code peek-unsupported}. */
    public String type() {
        return type;
    }
}
