package dev.sluice.failsafe;

/**
 * What {@link FailSafeRateLimiter} decides when its store cannot: the store timed out, is down, is
 * overloaded or answered with an error. Every such decision carries the cause in
 * {@link dev.sluice.Decision#degradation()}.
 */
public enum FailurePolicy {
    /** Allow the call. Availability first: an outage of the store never takes the application down. */
    FAIL_OPEN,
    /** Deny the call, with {@code retryAfter} the time until the store is tried again. Protection first. */
    FAIL_CLOSED,
    /**
     * An in-memory limiter with the same limits decides until the store answers again; then the store
     * takes over with its own state. Each process limits alone meanwhile, so across a fleet of n
     * processes up to n times the limit may pass during an outage.
     */
    FALLBACK_LOCAL
}
