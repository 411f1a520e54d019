package dev.sluice.http;

import dev.sluice.Decision;
import dev.sluice.Limit;

/**
 * Formats the response fields of the IETF httpapi draft "RateLimit header fields for HTTP" in its
 * structured-field syntax (RFC 9651 lists of items with parameters), for any HTTP front end of Sluice:
 * <pre>
 * RateLimit-Policy: "per-ip";q=100;w=60
 * RateLimit: "per-ip";r=99;t=1
 * Retry-After: 1            (only when denied)
 * </pre>
 * {@code q} is the quota (bucket capacity, GCRA burst, or window permits); {@code w} the window in seconds (for
 * the token bucket and GCRA: the time to refill from empty); {@code r} what remains; {@code t} the seconds until
 * the quota is whole again. Seconds round <em>up</em>, so a client that waits them is never early. It lives in
 * core, which has no dependencies, so that the servlet filter and the service share one spelling without
 * depending on each other.
 */
public final class RateLimitFields {
    /** Header name of the policy list. */
    public static final String POLICY = "RateLimit-Policy";
    /** Header name of the state list. */
    public static final String STATE = "RateLimit";
    /** Header name of the wait, in whole seconds. */
    public static final String RETRY_AFTER = "Retry-After";
    /**
     * Header name of Sluice's mark on an answer its store did not decide (a failure policy did), valued with the
     * cause's {@code Degradation.label()}: {@code timeout}, {@code unavailable}, …
     */
    public static final String DEGRADED = "Sluice-Degraded";

    private RateLimitFields() {}

    /** Appends {@code "name";q=..;w=..} for {@code limit}, after a {@code ", "} when {@code list} is not empty. */
    public static StringBuilder appendPolicy(StringBuilder list, String name, Limit limit) {
        separate(list);
        return sfString(list, name)
                .append(";q=")
                .append(limit.capacity())
                .append(";w=")
                .append(windowSeconds(limit));
    }

    /** Appends {@code "name";r=..;t=..} for {@code decision}, after a {@code ", "} when {@code list} is not empty. */
    public static StringBuilder appendState(StringBuilder list, String name, Decision decision) {
        separate(list);
        return sfString(list, name)
                .append(";r=")
                .append(decision.remaining())
                .append(";t=")
                .append(ceilSeconds(decision.resetAfterNanos()));
    }

    /** The {@code Retry-After} value of a denied decision: whole seconds, rounded up, at least 1. */
    public static long retryAfterSeconds(Decision decision) {
        return Math.max(1, ceilSeconds(decision.retryAfterNanos()));
    }

    /**
     * The {@code w} of a limit, at least 1: the window for window algorithms; for the token bucket and GCRA the
     * time to refill from empty, {@code capacity × period / permits} (saturating).
     */
    public static long windowSeconds(Limit limit) {
        long nanos;
        if (limit.algorithm().isTat()) {
            double n = (double) limit.capacity()
                    * limit.periodNanos()
                    / limit.rate().permits();
            nanos = n >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(n);
        } else {
            nanos = limit.periodNanos();
        }
        return Math.max(1, ceilSeconds(nanos));
    }

    /** Whole seconds, rounded up. */
    public static long ceilSeconds(long nanos) {
        return nanos / 1_000_000_000L + (nanos % 1_000_000_000L == 0 ? 0 : 1);
    }

    /** An sf-string: printable ASCII, {@code "} and {@code \} escaped; anything else becomes {@code ?}. */
    public static StringBuilder sfString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c >= 0x20 && c <= 0x7e) {
                sb.append(c);
            } else {
                sb.append('?');
            }
        }
        return sb.append('"');
    }

    private static void separate(StringBuilder list) {
        if (list.length() > 0) {
            list.append(", ");
        }
    }
}
