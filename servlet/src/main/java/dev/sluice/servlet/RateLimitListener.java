package dev.sluice.servlet;

import dev.sluice.Decision;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Told about every request a rule applied to, after the decision and before the request goes on; for metrics.
 * Called on the request thread, so it must be quick and must not throw (what it throws is logged and ignored).
 */
@FunctionalInterface
public interface RateLimitListener {

    /** What the filter did with a request. */
    enum Outcome {
        /** Every limit had room; the request went on. */
        ALLOWED,
        /** Answered 429. */
        DENIED,
        /** Would have been denied, but shadow mode let it through. */
        SHADOW_DENIED,
        /** The limiter threw; the request went on (a rate limiter must not take the application down). */
        LIMITER_FAILED,
        /** The request's cost could never be granted; answered 400. */
        BAD_COST
    }

    /**
     * Told the outcome of every request a rule applied to.
     *
     * @param rules the names of the rules that applied, in order
     * @param decision the combined decision; for a denial by a rule's max in flight, that slot's decision (its
     *     {@code limit} the maximum); null for {@link Outcome#LIMITER_FAILED} and {@link Outcome#BAD_COST}, and when
     *     the rules that applied limit work in flight only
     */
    void onDecision(HttpServletRequest request, List<String> rules, Outcome outcome, @Nullable Decision decision);

    /** Ignores everything. */
    RateLimitListener NONE = (request, rules, outcome, decision) -> {};
}
