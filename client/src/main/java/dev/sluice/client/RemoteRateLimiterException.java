package dev.sluice.client;

/** The decision service could not be reached, timed out, or failed (HTTP 5xx). */
public final class RemoteRateLimiterException extends RuntimeException {
    public RemoteRateLimiterException(String message, Throwable cause) {
        super(message, cause);
    }
}
