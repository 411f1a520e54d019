package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.servlet.RateLimitListener.Outcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The one place where every Spring front end of Sluice counts what it decided: the servlet filter (a request, under
 * each of the rules that applied), {@link RateLimited} methods (a call, under its method) and Spring Cloud Gateway's
 * limiter (a request, under its route). It keeps the counts since the start that the {@code ratelimits} endpoint
 * shows, whether or not Micrometer is present, and passes each decision to the {@link DecisionMeters} (Sluice's
 * Micrometer counters, when Micrometer is present), so the three are counted alike and metered under the same names.
 *
 * <p>A request that several rules applied to counts once under each of them, with the outcome of the whole request
 * (rules apply all or nothing): a rule's {@code denied} is "requests it applied to that were denied", as in the
 * {@code sluice.requests} metric. It names no servlet type, so it is defined in every application, reactive ones
 * (Spring Cloud Gateway) included. Counting costs a contended increment and, after a name's first request, no
 * allocation (but the joined {@code rules} tag of a request that several rules applied to).
 */
public final class DecisionCounts {
    private final DecisionMeters meters;
    private final ConcurrentHashMap<String, OutcomeCounts> requests = new ConcurrentHashMap<>();
    /** The gateway's routes, as they loaded, for the endpoint. Written when routes load, read by the endpoint. */
    private final Map<String, Route> routes = new LinkedHashMap<>();

    /** Counts, and tells {@code meters} of every decision. */
    public DecisionCounts(DecisionMeters meters) {
        this.meters = Objects.requireNonNull(meters, "meters must not be null");
    }

    /** Counts without metering. */
    public DecisionCounts() {
        this(DecisionMeters.NONE);
    }

    /**
     * A request the servlet filter decided.
     *
     * @param rules the names of the rules that applied, in order
     * @param decision the combined decision; null when the limiter failed or the cost could never be granted
     */
    public void request(List<String> rules, Outcome outcome, @Nullable Decision decision) {
        for (int i = 0; i < rules.size(); i++) {
            countsOf(rules.get(i)).add(outcome);
        }
        meters.request(rules.size() == 1 ? rules.get(0) : String.join("+", rules), outcome, decision);
    }

    /**
     * A request decided under one name: a gateway route's id.
     *
     * @param decision null when the limiter failed, or when no store was asked (a closed route)
     */
    public void request(String name, Outcome outcome, @Nullable Decision decision) {
        countsOf(name).add(outcome);
        meters.request(name, outcome, decision);
    }

    /** A call of an annotated method. */
    void call(RateLimitedMethod method, Outcome outcome, @Nullable Decision decision) {
        method.counts.add(outcome);
        meters.call(method.limitName, method.metricName, outcome, decision);
    }

    /**
     * Records how the gateway route {@code id} is limited, for the endpoint: its {@code limit} (null when the route
     * denies every request; shown named by the route, as its {@code RateLimit-Policy} item is) and the permits each
     * request spends. A route loaded again replaces what it said.
     */
    public void route(String id, @Nullable Limit limit, long cost) {
        synchronized (routes) {
            routes.put(id, new Route(id, limit == null ? null : limit.named(id), cost));
        }
    }

    /**
     * A gateway route as it loaded.
     *
     * @param limit null when the route denies every request
     */
    public record Route(String id, @Nullable Limit limit, long cost) {}

    /** The gateway routes recorded so far, in the order they first loaded. */
    public List<Route> routes() {
        synchronized (routes) {
            return new ArrayList<>(routes.values());
        }
    }

    /**
     * The requests counted under {@code name} (a rule or a route) since the start, by outcome:
     * {@code {"allowed": 3, "denied": 1, "shadow_denied": 0, "limiter_failed": 0, "bad_cost": 0}}.
     */
    public Map<String, Long> outcomes(String name) {
        return countsOf(name).toMap();
    }

    private OutcomeCounts countsOf(String name) {
        OutcomeCounts c = requests.get(name); // the common case without computeIfAbsent's lock
        return c != null ? c : requests.computeIfAbsent(name, k -> new OutcomeCounts());
    }
}
