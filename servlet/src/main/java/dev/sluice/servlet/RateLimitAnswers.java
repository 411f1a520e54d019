package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.http.RateLimitFields;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * The headers and 429 answers of a {@link RateLimitFilter}: {@code RateLimit} on an allowed request, and on a
 * denied one {@code RateLimit-Policy}, {@code RateLimit}, {@code Retry-After} and a problem body naming the limit.
 */
final class RateLimitAnswers {
    /** By identity: two rules' equal limits have their own names, so their own items. */
    private final IdentityHashMap<Limit, String> policyItems = new IdentityHashMap<>();

    private final String problemType;

    RateLimitAnswers(List<RateLimitRule> rules, String problemType) {
        this.problemType = problemType;
        for (RateLimitRule r : rules) {
            // the header items of every limit, spelled once here rather than per request
            Limit one = r.limit();
            if (one != null) {
                policyItems.put(one, policyItem(one));
            }
            r.tiers().values().forEach(l -> policyItems.put(l, policyItem(l)));
        }
    }

    /** The {@code RateLimit} header of an allowed request. */
    void allowed(HttpServletResponse response, AppliedRules applied, Decision d) {
        response.setHeader(RateLimitFields.STATE, state(applied, d));
    }

    /** Answers 429 for a rate limit that denied. */
    void denied(HttpServletResponse response, String instance, AppliedRules applied, Decision d) throws IOException {
        StringBuilder policy = new StringBuilder();
        Set<Limit> listed = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Limit l : applied.limits) {
            if (listed.add(l)) { // each limit's item once
                if (policy.length() > 0) {
                    policy.append(", ");
                }
                policy.append(policyItems.get(l));
            }
        }
        response.setHeader(RateLimitFields.POLICY, policy.toString());
        response.setHeader(RateLimitFields.STATE, state(applied, d));
        long retry = RateLimitFields.retryAfterSeconds(d);
        response.setHeader(RateLimitFields.RETRY_AFTER, Long.toString(retry));
        String limitName = RateLimitRule.nameOf(owner(applied, d));
        String detail = d.degraded()
                ? "Rate limit '" + limitName + "' could not be checked ("
                        + d.degradation().label() + ") and the failure policy denies: retry in " + retry + " s."
                : "Rate limit '" + limitName + "' exceeded: retry in " + retry + " s.";
        ProblemJson.write(
                response,
                problemType,
                429,
                "Too Many Requests",
                detail,
                instance,
                limitName,
                retry,
                d.degraded() ? d.degradation().label() : null);
    }

    /**
     * Answers 429 for a rule's max in flight. {@code Retry-After} is 1 s, not the time until the earliest lease ends
     * (the decision's {@code retryAfter}): a slot frees as soon as a request in flight ends, which is usually far
     * sooner than its lease.
     */
    void inFlightDenied(HttpServletResponse response, String instance, AppliedRules.Slot slot, Decision d)
            throws IOException {
        response.setHeader(RateLimitFields.RETRY_AFTER, "1");
        String detail = d.degraded()
                ? "Max in flight of rule '" + slot.rule() + "' could not be checked ("
                        + d.degradation().label() + ") and the failure policy denies: retry in 1 s."
                : "Max in flight of rule '" + slot.rule() + "' reached: " + slot.max()
                        + " requests of this key are in flight; retry in 1 s, or when one of them ends.";
        ProblemJson.write(
                response,
                problemType,
                429,
                "Too Many Requests",
                detail,
                instance,
                slot.rule(),
                1,
                d.degraded() ? d.degradation().label() : null);
    }

    String state(AppliedRules applied, Decision d) {
        return RateLimitFields.appendState(new StringBuilder(), RateLimitRule.nameOf(owner(applied, d)), d)
                .toString();
    }

    /** The limit a combined decision belongs to: the first whose capacity is the decision's. */
    static Limit owner(AppliedRules applied, Decision d) {
        for (Limit l : applied.limits) {
            if (l.capacity() == d.limit()) {
                return l;
            }
        }
        return applied.limits.get(0);
    }

    private static String policyItem(Limit l) {
        return RateLimitFields.appendPolicy(new StringBuilder(), RateLimitRule.nameOf(l), l)
                .toString();
    }
}
