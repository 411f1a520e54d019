package dev.sluice.spring;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.http.RateLimitFields;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.servlet.CostAfter;
import dev.sluice.servlet.RateLimitRule;
import dev.sluice.spring.SluiceProperties.RuleSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code GET /actuator/ratelimits}: what Sluice enforces in this application and how it is going. The servlet
 * filter's rules (paths, methods, key, cost, limit or tiers with their numbers) with how many requests each applied
 * to by outcome; the named limits; the {@link RateLimited} methods with their calls by outcome; in a Spring Cloud
 * Gateway, its routes with their limits and requests by outcome; and the store: its kind, whether it is healthy and,
 * for a remote store, how many decisions its failure policy made by cause.
 *
 * <p>Counts are kept by {@link DecisionCounts} ({@code LongAdder}s) whether or not Micrometer is present, since the
 * application started. Nothing here names a store's address or credentials: a Redis URI may carry a password.
 */
@Endpoint(id = "ratelimits")
class RateLimitsEndpoint {
    /** The properties in force (a refresh replaces them). */
    private final Supplier<SluiceProperties> inForce;

    private final Supplier<RateLimiter> limiter;
    private final DecisionCounts counts;
    private final RateLimitedMethods methods;
    private final BooleanSupplier filterPresent;

    /**
     * @param limiter the application's limiter, or null when Sluice is off
     * @param counts the decisions counted, or null when Sluice is off
     * @param methods the annotated methods, or null when Sluice is off
     * @param filterPresent whether a {@code RateLimitFilter} applies the rules (a servlet application)
     */
    RateLimitsEndpoint(
            Supplier<SluiceProperties> inForce,
            Supplier<RateLimiter> limiter,
            DecisionCounts counts,
            RateLimitedMethods methods,
            BooleanSupplier filterPresent) {
        this.inForce = inForce;
        this.limiter = limiter;
        this.counts = counts;
        this.methods = methods;
        this.filterPresent = filterPresent;
    }

    @ReadOperation
    public Map<String, Object> rateLimits() {
        SluiceProperties properties = inForce.get();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", properties.isEnabled());
        m.put("shadowMode", properties.isShadowMode());
        if (!properties.isEnabled()) {
            return m; // sluice.enabled=false: nothing is limited, and the rules need not even be valid
        }
        m.put("store", store(limiter.get(), properties));
        Map<String, Object> limits = new LinkedHashMap<>();
        RuleFactory.namedLimits(properties).forEach((name, l) -> limits.put(name, limit(l)));
        m.put("limits", limits);
        boolean filter = filterPresent.getAsBoolean();
        m.put("filter", filter);
        // the rules are the servlet filter's: built (and so the servlet API touched) only where there is one
        m.put("rules", filter ? rules(properties) : List.of());
        List<DecisionCounts.Route> routes = counts == null ? List.of() : counts.routes();
        if (!routes.isEmpty()) {
            m.put("routes", routes(routes));
        }
        List<Object> annotated = new ArrayList<>();
        if (methods != null) {
            for (RateLimitedMethod rm : methods.methods()) {
                Map<String, Object> d = new LinkedHashMap<>();
                d.put(
                        "method",
                        rm.method.getDeclaringClass().getName()
                                + '.'
                                + rm.description.substring(rm.description.indexOf('.') + 1));
                d.put("limit", rm.limitName);
                d.put("key", rm.keySource.isEmpty() ? null : rm.keySource);
                d.put("cost", rm.costSource.isEmpty() ? "1" : rm.costSource);
                d.put("scope", rm.scope);
                d.put("returns", rm.returns.name().toLowerCase(Locale.ROOT));
                d.put("counts", rm.counts.toMap());
                annotated.add(d);
            }
        }
        m.put("methods", annotated);
        return m;
    }

    private List<Object> rules(SluiceProperties properties) {
        List<RateLimitRule> built = RuleFactory.rules(properties); // checked at startup: it builds
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < built.size(); i++) {
            RateLimitRule r = built.get(i);
            RuleSpec spec = properties.getRules().get(i);
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("name", r.name());
            d.put("paths", r.paths().stream().map(Object::toString).toList());
            d.put("methods", List.copyOf(r.methods()));
            d.put("key", spec.getKey());
            if (spec.getCostHeader() != null && !spec.getCostHeader().isBlank()) {
                d.put("costHeader", spec.getCostHeader().strip());
            }
            d.put("cost", spec.getCost());
            CostAfter after = r.costAfter();
            if (after != null) {
                Map<String, Object> a = new LinkedHashMap<>();
                a.put("estimate", Objects.requireNonNull(spec.getCostAfter()).getEstimate());
                a.put("attribute", after.attribute());
                a.put("header", after.header());
                a.put("settleWithin", after.settleWithin().toString());
                d.put("costAfter", a);
            }
            if (r.maxInFlight() > 0) {
                d.put("maxInFlight", r.maxInFlight());
                d.put("inFlightLease", r.inFlightLease().toString());
            }
            if (r.limit() != null) {
                d.put("limit", limit(r.limit()));
            } else if (!r.tiers().isEmpty()) {
                Map<String, Object> tiers = new LinkedHashMap<>();
                r.tiers().forEach((tier, l) -> tiers.put(tier, limit(l)));
                d.put("tiers", tiers);
            }
            d.put("counts", counts == null ? new OutcomeCounts().toMap() : counts.outcomes(r.name()));
            out.add(d);
        }
        return out;
    }

    /**
     * The gateway's routes: {@code {"id": "api", "limit": {...}, "cost": 1, "counts": {...}}}, the limit null for a
     * route that denies every request ({@code burstCapacity: 0}).
     */
    private List<Object> routes(List<DecisionCounts.Route> routes) {
        List<Object> out = new ArrayList<>();
        for (DecisionCounts.Route r : routes) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("id", r.id());
            d.put("limit", r.limit() == null ? null : limit(r.limit()));
            d.put("cost", r.cost());
            d.put("counts", counts.outcomes(r.id()));
            out.add(d);
        }
        return out;
    }

    /**
     * {@code {"name": "per-ip", "algorithm": "fixed_window", "capacity": 100, "permits": 100, "period": "PT1M",
     * "policy": "\"per-ip\";q=100;w=60"}}: capacity is the bucket size, burst or window's permits; permits per period
     * the refill rate (token bucket, GCRA) or the window; policy the {@code RateLimit-Policy} item clients see.
     */
    static Map<String, Object> limit(Limit l) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("name", l.name());
        d.put("algorithm", l.algorithm().configName());
        d.put("capacity", l.capacity());
        d.put("permits", l.rate().permits());
        d.put("period", l.rate().period().toString());
        d.put(
                "policy",
                RateLimitFields.appendPolicy(new StringBuilder(), l.name() == null ? "" : l.name(), l)
                        .toString());
        return d;
    }

    private Map<String, Object> store(RateLimiter l, SluiceProperties properties) {
        Map<String, Object> d = new LinkedHashMap<>();
        if (l instanceof InMemoryRateLimiter) {
            d.put("kind", "memory");
            d.put("healthy", true);
        } else if (l instanceof FailSafeRateLimiter f) {
            d.put("kind", remoteKind(properties));
            d.put("healthy", f.storeHealthy());
            d.put("failurePolicy", f.policy().name().toLowerCase(Locale.ROOT));
            Map<String, Long> degraded = new LinkedHashMap<>();
            for (Degradation cause : Degradation.values()) {
                if (cause != Degradation.NONE) {
                    degraded.put(cause.label(), f.degradedCount(cause));
                }
            }
            d.put("degradedDecisions", degraded);
        } else {
            d.put("kind", l == null ? "none" : l.getClass().getSimpleName());
        }
        return d;
    }

    /** redis or datasource, from sluice.store: the URI itself may carry a password. */
    private static String remoteKind(SluiceProperties properties) {
        String s = properties.getStore() == null
                ? ""
                : properties.getStore().strip().toLowerCase(Locale.ROOT);
        if (s.startsWith("redis")) {
            return "redis";
        }
        return s.equals("datasource") ? "datasource" : "fail-safe";
    }
}
