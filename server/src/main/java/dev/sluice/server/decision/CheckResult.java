package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.server.config.Rule;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a {@link CheckRequest}: the overall code and one status per descriptor, in request order.
 *
 * @param allowed  true when every enforced descriptor is within its limit (shadow-mode rules never deny)
 * @param statuses one per request descriptor
 * @param combined the most restrictive of the enforced descriptors' decisions (what
 *                 {@link dev.sluice.RateLimiter#tryAcquire(java.util.List)} returns), or null when no descriptor
 *                 reached a limit
 */
public record CheckResult(
        boolean allowed, List<Status> statuses, @Nullable Decision combined) {

    /**
     * Why this answer was made without the store's word, or {@link Degradation#NONE}: the combined decision's cause,
     * else the first degraded descriptor's (a shadow-mode or check-only descriptor may be degraded alone).
     */
    public Degradation degradation() {
        if (combined != null && combined.degraded()) {
            return combined.degradation();
        }
        for (Status s : statuses) {
            if (s.decision() != null && s.decision().degraded()) {
                return s.decision().degradation();
            }
        }
        return Degradation.NONE;
    }

    /** envoy's per-descriptor code. */
    public enum Code {
        OK,
        OVER_LIMIT
    }

    /** Why a descriptor got its status; also the {@code outcome} label of the decisions metric. */
    public enum Outcome {
        /** Within a limit. */
        OK,
        /** Over a limit: denied. */
        OVER_LIMIT,
        /** Over a shadow-mode limit: reported as OK, counted apart. */
        SHADOW_OVER_LIMIT,
        /** {@code unlimited: true}. */
        UNLIMITED,
        /** {@code requests_per_unit: 0}. */
        BLOCKED,
        /** No rule matched, or the rule was replaced: nothing to limit. */
        NO_RULE,
        /** Evaluated with {@code hits: 0}: nothing consumed. */
        CHECKED,
        /** Not evaluated, nothing consumed: another descriptor of this all-or-nothing request was blocked or
         *  failed its check-only look. */
        SKIPPED
    }

    /**
     * One descriptor's answer.
     *
     * @param code     OK or OVER_LIMIT
     * @param outcome  the finer reason
     * @param rule     the rule that decided (null for NO_RULE; a synthetic rule for caller-sent limits)
     * @param limit    the limit evaluated, or null
     * @param decision the store's decision, or null when the store was not consulted
     * @param hits     the permits asked for
     * @param metricRule the {@code rule} label for metrics
     * @param detailed true when {@code decision} is this descriptor's own; false when a multi-descriptor request
     *                 could only be answered with the combined (most restrictive) decision
     */
    public record Status(
            Code code,
            Outcome outcome,
            @Nullable Rule rule,
            @Nullable Limit limit,
            @Nullable Decision decision,
            long hits,
            String metricRule,
            boolean detailed) {}
}
