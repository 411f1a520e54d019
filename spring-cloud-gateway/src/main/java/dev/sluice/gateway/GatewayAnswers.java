package dev.sluice.gateway;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.StoreException;
import dev.sluice.failsafe.LogThrottle;
import dev.sluice.http.RateLimitFields;
import dev.sluice.servlet.RateLimitListener.Outcome;
import dev.sluice.spring.DecisionCounts;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;

/**
 * What {@link SluiceRateLimiter} answers for a route's decision, counted in {@link DecisionCounts} (the
 * {@code ratelimits} endpoint and the {@code sluice.requests} meter, tagged with the route's id), and the header
 * names and switch it is configured with.
 *
 * <p>The store's decision answers with RedisRateLimiter's headers and values, then {@code RateLimit-Policy},
 * {@code RateLimit} and, when denied, {@code Retry-After}. A decision the store did not make claims nothing it does
 * not know: a failure policy's ({@code Decision.degraded()}: the store was slow or down) or none at all (the store
 * threw: the request goes on, as with RedisRateLimiter) answers {@code X-RateLimit-Remaining: -1} as
 * RedisRateLimiter answers on a Redis error, keeps the route's settings and {@code RateLimit-Policy} (they are
 * configuration), leaves {@code RateLimit} out (its remaining value is unknown) and says why in
 * {@code Sluice-Degraded: <cause>}. A policy's denial keeps its {@code Retry-After}: when to try again is what the
 * policy decided.
 */
final class GatewayAnswers {
    private static final System.Logger LOG = System.getLogger(SluiceRateLimiter.class.getName());

    boolean include = true;
    String remaining = SluiceRateLimiter.REMAINING_HEADER;
    String replenishRate = SluiceRateLimiter.REPLENISH_RATE_HEADER;
    String burstCapacity = SluiceRateLimiter.BURST_CAPACITY_HEADER;
    String requestedTokens = SluiceRateLimiter.REQUESTED_TOKENS_HEADER;
    /** Where decisions are counted: the application's, else one of its own. */
    private volatile @Nullable DecisionCounts counts;

    private final LogThrottle logThrottle = new LogThrottle();

    void countIn(DecisionCounts counts) {
        this.counts = counts;
    }

    boolean counting() {
        return counts != null;
    }

    DecisionCounts counts() {
        DecisionCounts c = counts;
        if (c == null) {
            c = new DecisionCounts();
            counts = c;
        }
        return c;
    }

    /** The store's (or its failure policy's) decision. */
    Response decided(String routeId, RouteLimit route, Decision d) {
        counts().request(routeId, d.allowed() ? Outcome.ALLOWED : Outcome.DENIED, d);
        return new Response(d.allowed(), headers(routeId, route, d, null));
    }

    /** A route that denies every request ({@code burstCapacity: 0}): no store was asked. */
    Response closed(String routeId, RouteLimit route) {
        counts().request(routeId, Outcome.DENIED, null);
        return new Response(false, headers(routeId, route, null, null));
    }

    /**
     * The store threw (a store without a failure policy in front of it, or a bug): the request goes on, as with
     * RedisRateLimiter and Sluice's servlet filter, since a rate limiter must not take the gateway down. Logged, a
     * few lines a second at most.
     */
    Response failed(String routeId, RouteLimit route, Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        Degradation why = cause instanceof StoreException s ? s.degradation() : Degradation.STORE_ERROR;
        counts().request(routeId, Outcome.LIMITER_FAILED, null);
        if (logThrottle.allow("failed")) {
            long left = logThrottle.suppressedSinceLast();
            LOG.log(
                    System.Logger.Level.WARNING,
                    "rate limiter failed; letting a request of route '" + routeId + "' through"
                            + (left == 0 ? "" : " (" + left + " similar lines left out)"),
                    cause);
        }
        return new Response(true, headers(routeId, route, null, why));
    }

    /**
     * @param d the decision; null when no store was asked (a closed route) or none came ({@code failed})
     * @param failed why no decision came, or null
     */
    Map<String, String> headers(String routeId, RouteLimit route, @Nullable Decision d, @Nullable Degradation failed) {
        Map<String, String> h = new LinkedHashMap<>();
        if (!include) {
            return h;
        }
        Degradation degraded = failed != null ? failed : d != null && d.degraded() ? d.degradation() : null;
        h.put(remaining, degraded != null ? "-1" : Long.toString(d == null ? 0 : d.remaining()));
        if (route.replenishRate() != null) {
            h.put(replenishRate, route.replenishRate());
        }
        h.put(burstCapacity, route.burstCapacity());
        h.put(requestedTokens, route.requestedTokens());
        if (route.limit() != null && (d != null || failed != null)) {
            h.put(
                    RateLimitFields.POLICY,
                    RateLimitFields.appendPolicy(new StringBuilder(), routeId, route.limit())
                            .toString());
        }
        if (d != null && degraded == null) {
            h.put(
                    RateLimitFields.STATE,
                    RateLimitFields.appendState(new StringBuilder(), routeId, d).toString());
        }
        if (d != null && d.denied()) {
            h.put(RateLimitFields.RETRY_AFTER, Long.toString(RateLimitFields.retryAfterSeconds(d)));
        }
        if (degraded != null) {
            h.put(RateLimitFields.DEGRADED, degraded.label());
        }
        return h;
    }
}
