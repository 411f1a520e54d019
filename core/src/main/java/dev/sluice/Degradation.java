package dev.sluice;

import java.util.Locale;

/**
 * Why a {@link Decision} was made without the store's word, or {@link #NONE} when the store decided.
 *
 * <p>A degraded decision comes from a {@code FailurePolicy} applied by {@code FailSafeRateLimiter}: allowed
 * ({@code FAIL_OPEN}), denied ({@code FAIL_CLOSED}) or decided by a local in-memory limiter
 * ({@code FALLBACK_LOCAL}). The cause is what the store did, so that metrics can count degraded decisions
 * by cause and an operator can tell a slow store from a dead one, and an outage from a mistake.
 *
 * <p>Two families: an <em>outage</em> ({@link #TIMEOUT}, {@link #UNAVAILABLE}) heals by itself, so a service may
 * start during one and wait for the store; a <em>misconfiguration</em> ({@link #MISCONFIGURED}) heals only when an
 * operator fixes it, so it fails startup at once and loudly, and after a good start (a rotated password) its
 * reconnections back off instead of hammering the store with logins.
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
    STORE_ERROR,
    /**
     * The store refused this client's configuration: authentication or authorization refused, an unknown host, a
     * server that speaks another protocol (a Redis URL at PostgreSQL's port), a TLS mismatch, a missing database,
     * schema or privilege. No retry fixes it; an operator must.
     */
    MISCONFIGURED;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** The lower-case name used in metrics labels, JSON and headers: {@code timeout}, {@code store_error}. */
    public String label() {
        return label;
    }

    /**
     * Whether the store cannot serve this client for a while (timed out, unreachable, or refusing its
     * configuration), so that further calls should not wait on it: the circuit opens on these.
     */
    public boolean storeUnhealthy() {
        return this == TIMEOUT || this == UNAVAILABLE || this == MISCONFIGURED;
    }
}
