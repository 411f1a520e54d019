package dev.sluice.spring;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The filter's outcomes per rule, for the {@code ratelimits} endpoint. A request that several rules applied to
 * counts once under each of them, with the outcome of the whole request (rules apply all or nothing): a rule's
 * {@code denied} is "requests it applied to that were denied", as in the {@code sluice.requests} metric. It names
 * no servlet type (the filter's listener that feeds it lives in the servlet-only configuration): it is defined in
 * reactive applications too.
 */
final class RuleCounts {
    private final ConcurrentHashMap<String, OutcomeCounts> byRule = new ConcurrentHashMap<>();

    OutcomeCounts rule(String name) {
        OutcomeCounts c = byRule.get(name); // the common case without computeIfAbsent's lock
        return c != null ? c : byRule.computeIfAbsent(name, k -> new OutcomeCounts());
    }
}
