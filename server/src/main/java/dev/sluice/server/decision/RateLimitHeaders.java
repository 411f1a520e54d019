package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.http.RateLimitFields;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The response headers of the IETF httpapi draft "RateLimit header fields for HTTP", in its structured-field
 * syntax (RFC 9651 lists of items with parameters):
 * <pre>
 * RateLimit-Policy: "api.remote_address";q=20;w=2
 * RateLimit: "api.remote_address";r=19;t=1
 * Retry-After: 1            (only when over the limit)
 * </pre>
 * One item per limited descriptor, named by the rule's {@code name} or its place in the file. {@code q} is the
 * quota (bucket capacity, GCRA burst, or window permits); {@code w} is the window in seconds (for token bucket
 * and GCRA: the time to refill from empty); {@code r} is what remains; {@code t} the seconds until the quota is
 * whole again. Seconds round up, so a client that waits them is never early. Shared by HTTP and the gRPC
 * {@code response_headers_to_add}.
 *
 * <p>When the store did not decide and a failure policy did, {@code Sluice-Degraded} names the cause
 * ({@code timeout}, {@code unavailable}, {@code overloaded}, {@code store_error}; see {@link dev.sluice.Degradation}),
 * so that a proxy's access log or the caller can tell an exact answer from a policy's.
 */
public final class RateLimitHeaders {
    /** The header that marks an answer made by the failure policy instead of the store. */
    public static final String DEGRADED = "Sluice-Degraded";

    private RateLimitHeaders() {}

    /** Header name → value; empty when no descriptor hit a limit and nothing was degraded. */
    public static Map<String, String> of(CheckResult result) {
        StringBuilder policy = new StringBuilder();
        StringBuilder state = new StringBuilder();
        long retryNanos = 0;
        Set<String> seen = new HashSet<>();
        // When a multi-descriptor answer only knows the combined decision, the RateLimit item goes to the one
        // policy that decision belongs to (the first whose quota matches its limit), not to every descriptor.
        List<CheckResult.Status> statuses = result.statuses();
        int owner = -1;
        for (int i = 0; i < statuses.size(); i++) {
            CheckResult.Status s = statuses.get(i);
            if (!s.detailed()
                    && s.limit() != null
                    && result.combined() != null
                    && s.limit().capacity() == result.combined().limit()) {
                owner = i;
                break;
            }
        }
        for (int i = 0; i < statuses.size(); i++) {
            CheckResult.Status s = statuses.get(i);
            Decision d = s.decision();
            if (d == null || s.rule() == null) {
                continue;
            }
            boolean stateKnown = s.detailed() || i == owner;
            if (s.code() == CheckResult.Code.OVER_LIMIT) {
                retryNanos = Math.max(retryNanos, d.retryAfterNanos());
            }
            String name = s.rule().policyName();
            if (!seen.add(name)) {
                continue;
            }
            Limit l = s.limit();
            if (l != null) {
                RateLimitFields.appendPolicy(policy, name, l);
            } else { // a rule without a limit of its own (unlimited): its window as written
                sep(policy);
                RateLimitFields.sfString(policy, name)
                        .append(";q=0;w=")
                        .append(Math.max(1, RateLimitFields.ceilSeconds(s.rule().windowNanos())));
            }
            if (stateKnown) {
                RateLimitFields.appendState(state, name, d);
            }
        }
        Map<String, String> h = new LinkedHashMap<>();
        if (policy.length() > 0) {
            h.put(RateLimitFields.POLICY, policy.toString());
        }
        if (state.length() > 0) {
            h.put(RateLimitFields.STATE, state.toString());
        }
        if (!result.allowed()) {
            h.put(RateLimitFields.RETRY_AFTER, Long.toString(Math.max(1, RateLimitFields.ceilSeconds(retryNanos))));
        }
        Degradation degraded = result.degradation();
        if (degraded != Degradation.NONE) {
            h.put(DEGRADED, degraded.label());
        }
        return h;
    }

    private static void sep(StringBuilder sb) {
        if (sb.length() > 0) {
            sb.append(", ");
        }
    }
}
