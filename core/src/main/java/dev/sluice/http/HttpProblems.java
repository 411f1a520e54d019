package dev.sluice.http;

import dev.sluice.FailureKind;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP spelling of a {@link FailureKind}: its status and its RFC 9457 problem type
 * ({@code urn:sluice:problem:<slug>}), and back. The service answers with it and the remote client reads it, so
 * both sides share this one table:
 * <pre>
 * BAD_REQUEST    400  the bad value's own slug (unknown-domain, invalid-hits, …); invalid-request by default
 * UNSUPPORTED    501  unsupported (peek-unsupported for a check-only request)
 * TIMED_OUT      503  store-timeout
 * UNAVAILABLE    503  store-unavailable
 * OVERLOADED     503  store-overloaded
 * STORE_ERROR    503  store-error
 * MISCONFIGURED  503  store-misconfigured
 * INTERNAL       500  internal-error
 * </pre>
 * A 400 or a 501 is told by its status, whatever its slug; a 503 by its slug.
 */
public final class HttpProblems {
    /** What every problem type of Sluice starts with. */
    public static final String TYPE_PREFIX = "urn:sluice:problem:";

    private HttpProblems() {}

    /** The HTTP status of a failure of this kind. */
    public static int status(FailureKind kind) {
        return switch (kind) {
            case BAD_REQUEST -> 400;
            case UNSUPPORTED -> 501;
            case TIMED_OUT, UNAVAILABLE, OVERLOADED, STORE_ERROR, MISCONFIGURED -> 503;
            case INTERNAL -> 500;
        };
    }

    /**
     * The problem type's slug of this kind ({@code store-timeout}, …): the only one for the store's kinds and
     * {@link FailureKind#INTERNAL}, the default for the others, whose answers may name the problem more closely.
     */
    public static String type(FailureKind kind) {
        return switch (kind) {
            case BAD_REQUEST -> "invalid-request";
            case UNSUPPORTED -> "unsupported";
            case TIMED_OUT -> "store-timeout";
            case UNAVAILABLE -> "store-unavailable";
            case OVERLOADED -> "store-overloaded";
            case STORE_ERROR -> "store-error";
            case MISCONFIGURED -> "store-misconfigured";
            case INTERNAL -> "internal-error";
        };
    }

    /**
     * The kind of an HTTP answer that is no decision, from its status and problem type (with or without
     * {@link #TYPE_PREFIX}; null when the body had none). Besides the table: 401 and 403 (the service refused the
     * caller's token) are {@link FailureKind#MISCONFIGURED}, a 502 or a 503 without a store slug (a proxy in between)
     * {@link FailureKind#UNAVAILABLE}, 504 {@link FailureKind#TIMED_OUT}, and any other status
     * {@link FailureKind#INTERNAL}.
     */
    public static FailureKind kindOf(int status, @Nullable String type) {
        String slug = type != null && type.startsWith(TYPE_PREFIX) ? type.substring(TYPE_PREFIX.length()) : type;
        if (status == 503 && slug != null) {
            for (FailureKind k : FailureKind.values()) {
                if (k.storeFailure() && type(k).equals(slug)) {
                    return k;
                }
            }
        }
        return switch (status) {
            case 400 -> FailureKind.BAD_REQUEST;
            case 501 -> FailureKind.UNSUPPORTED;
            case 401, 403 -> FailureKind.MISCONFIGURED;
            case 502, 503 -> FailureKind.UNAVAILABLE;
            case 504 -> FailureKind.TIMED_OUT;
            default -> FailureKind.INTERNAL;
        };
    }
}
