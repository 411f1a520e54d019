package dev.sluice.spring;

import dev.sluice.servlet.RateLimitListener;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The filter's outcomes per rule, for the {@code ratelimits} endpoint. A request that several rules applied to
 * counts once under each of them, with the outcome of the whole request (rules apply all or nothing): a rule's
 * {@code denied} is "requests it applied to that were denied", as in the {@code sluice.requests} metric.
 */
final class RuleCounts {
    private final ConcurrentHashMap<String, OutcomeCounts> byRule = new ConcurrentHashMap<>();

    OutcomeCounts rule(String name) {
        OutcomeCounts c = byRule.get(name); // the common case without computeIfAbsent's lock
        return c != null ? c : byRule.computeIfAbsent(name, k -> new OutcomeCounts());
    }

    /** The listener the filter tells, beside the application's (or the Micrometer one). */
    RateLimitListener listener(RateLimitListener next) {
        return (request, rules, outcome, decision) -> {
            for (int i = 0; i < rules.size(); i++) {
                rule(rules.get(i)).add(outcome);
            }
            next.onDecision(request, rules, outcome, decision);
        };
    }
}
