package dev.sluice;

import java.util.Locale;

/**
 * Why a {@link Decision} was made without the store's word, or {@link #NONE} when the store decided.
 *
 * <p>A degraded decision comes from a {@code FailurePolicy} applied by {@code FailSafeRateLimiter}: allowed
 * ({@code FAIL_OPEN}), denied ({@code FAIL_CLOSED}) or decided by a local in-memory limiter
 * ({@code FALLBACK_LOCAL}). The cause is what the store did, so that metrics can count degraded decisions
 * by cause and an operator can tell a slow store from a dead one.
 */
public enum Degradation {
    /** The store decided; nothing was degraded. */
    NONE,
    /** The store did not answer within the decision's time budget (slow, paused, or a lost packet). */
    TIMEOUT,
    /** The store could not be reached: connection refused or reset, name not resolved, not yet connected. */
    UNAVAILABLE,
    /** The client side was full: no pooled connection or queue slot within the budget. Nothing was sent. */
    OVERLOADED,
    /** The store answered with an error (a script or statement failed, a key holds foreign data). */
    STORE_ERROR;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** The lower-case name used in metrics labels, JSON and headers: {@code timeout}, {@code store_error}. */
    public String label() {
        return label;
    }

    /** Whether the store's health is in doubt, so that further calls should not wait on it for a while. */
    public boolean storeUnhealthy() {
        return this == TIMEOUT || this == UNAVAILABLE;
    }
}
