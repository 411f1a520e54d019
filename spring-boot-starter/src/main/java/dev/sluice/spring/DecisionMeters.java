package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.servlet.RateLimitListener.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * Where {@link DecisionCounts} passes every decision on to be metered: Sluice's Micrometer counters
 * ({@code sluice.requests} and {@code sluice.calls}) when Micrometer is present, or an application's own bean of this
 * type. Called on the request's thread (for the gateway, the thread that completed the decision), so it must be
 * quick and must not throw. No servlet or Micrometer type appears here: every kind of application has one.
 */
public interface DecisionMeters {

    /**
     * A request the servlet filter or the gateway decided.
     *
     * @param rules the names of what applied: the filter's rules joined by {@code +}, or the gateway route's id
     * @param decision null when the limiter failed or the cost could never be granted
     */
    void request(String rules, Outcome outcome, @Nullable Decision decision);

    /**
     * A call of a {@link RateLimited} method.
     *
     * @param limit the name of the limit in {@code sluice.limits}
     * @param method {@code SimpleClassName.method}
     * @param decision null when the limiter failed or the cost was not a valid one
     */
    void call(String limit, String method, Outcome outcome, @Nullable Decision decision);

    /** Meters nothing. */
    DecisionMeters NONE = new DecisionMeters() {
        @Override
        public void request(String rules, Outcome outcome, @Nullable Decision decision) {}

        @Override
        public void call(String limit, String method, Outcome outcome, @Nullable Decision decision) {}
    };
}
