package dev.sluice;

import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Why a call failed, in the one vocabulary every transport maps: the caller's mistake ({@link #BAD_REQUEST}), an
 * operation the store or algorithm does not define ({@link #UNSUPPORTED}), one of the store's failures (the five
 * kinds that are its {@link Degradation}s), or a fault of the code itself ({@link #INTERNAL}). The Java API keeps its
 * exception types ({@link IllegalArgumentException} for bad input, {@link UnsupportedOperationException},
 * {@link StoreException} with its {@link Degradation}); {@link #of(Throwable)} names the kind of any of them, and
 * each transport maps the kind in one place (ARCHITECTURE.md has the table: HTTP status and problem type, gRPC
 * status, the remote client's exception).
 */
public enum FailureKind {
    /** The input is wrong and the message names it and the fix: {@link IllegalArgumentException}. Nothing changed. */
    BAD_REQUEST,
    /** The store or the limit's algorithm does not define the operation: {@link UnsupportedOperationException}. */
    UNSUPPORTED,
    /** The store did not answer in time: {@link Degradation#TIMEOUT}. */
    TIMED_OUT,
    /** The store could not be reached: {@link Degradation#UNAVAILABLE}. */
    UNAVAILABLE,
    /** The caller's side was full (no connection, queue slot or pool thread): {@link Degradation#OVERLOADED}. */
    OVERLOADED,
    /** The store answered with an error: {@link Degradation#STORE_ERROR}. */
    STORE_ERROR,
    /** The store refused this client's configuration: {@link Degradation#MISCONFIGURED}. */
    MISCONFIGURED,
    /** Anything else: a fault of the code, logged with its stack trace where it is caught. */
    INTERNAL;

    private final String label = name().toLowerCase(Locale.ROOT);

    /** The lower-case name, for logs and metrics: {@code bad_request}, {@code timed_out}. */
    public String label() {
        return label;
    }

    /** The kind of a store failure of this cause. */
    public static FailureKind of(Degradation cause) {
        return switch (cause) {
            case TIMEOUT -> TIMED_OUT;
            case UNAVAILABLE -> UNAVAILABLE;
            case OVERLOADED -> OVERLOADED;
            case STORE_ERROR -> STORE_ERROR;
            case MISCONFIGURED -> MISCONFIGURED;
            case NONE -> throw new IllegalArgumentException("NONE is no failure: the store decided");
        };
    }

    /**
     * The kind of what a call threw, looking through {@link CompletionException} and {@link ExecutionException}:
     * {@link IllegalArgumentException} is {@link #BAD_REQUEST}, {@link UnsupportedOperationException}
     * {@link #UNSUPPORTED}, a {@link StoreException} its degradation's kind, anything else {@link #INTERNAL}.
     */
    public static FailureKind of(Throwable thrown) {
        Throwable t = unwrap(thrown);
        if (t instanceof IllegalArgumentException) {
            return BAD_REQUEST;
        }
        if (t instanceof UnsupportedOperationException) {
            return UNSUPPORTED;
        }
        if (t instanceof StoreException e) {
            return of(e.degradation());
        }
        return INTERNAL;
    }

    /** {@code thrown} without the {@link CompletionException}s and {@link ExecutionException}s around it. */
    public static Throwable unwrap(Throwable thrown) {
        Throwable t = thrown;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The store's cause this kind is, or null for the kinds that are no store failure. */
    public @Nullable Degradation degradation() {
        return switch (this) {
            case TIMED_OUT -> Degradation.TIMEOUT;
            case UNAVAILABLE -> Degradation.UNAVAILABLE;
            case OVERLOADED -> Degradation.OVERLOADED;
            case STORE_ERROR -> Degradation.STORE_ERROR;
            case MISCONFIGURED -> Degradation.MISCONFIGURED;
            case BAD_REQUEST, UNSUPPORTED, INTERNAL -> null;
        };
    }

    /** Whether the store failed (the five kinds that are a {@link Degradation}), rather than the call or the code. */
    public boolean storeFailure() {
        return degradation() != null;
    }
}
