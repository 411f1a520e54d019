package dev.sluice.spring;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.RateUnit;
import dev.sluice.servlet.CostAfter;
import dev.sluice.servlet.CostResolver;
import dev.sluice.servlet.KeyResolver;
import dev.sluice.servlet.RateLimitRule;
import dev.sluice.spring.SluiceProperties.LimitProperties;
import dev.sluice.spring.SluiceProperties.RuleSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Builds the filter's rules from {@code sluice.limits} and {@code sluice.rules}, checking everything at startup:
 * a rule naming an unknown limit or tier, a limit without a rate, an unknown unit, key or algorithm, a cost-after
 * without an estimate, a max-in-flight below 1 or a lease out of range each fail with the property path and the fix,
 * so a bad configuration never starts.
 */
final class RuleFactory {
    private RuleFactory() {}

    /** The limits under {@code sluice.limits}, in order, each named by its key. */
    static Map<String, Limit> namedLimits(SluiceProperties p) {
        Map<String, Limit> limits = new LinkedHashMap<>();
        p.getLimits()
                .forEach((name, spec) ->
                        limits.put(name, limit("sluice.limits." + name, spec).named(name)));
        return limits;
    }

    static List<RateLimitRule> rules(SluiceProperties p) {
        Map<String, Limit> limits = namedLimits(p);
        Set<String> tiers = new HashSet<>(p.getTiers());
        if (!tiers.isEmpty() && !tiers.contains(p.getDefaultTier())) {
            throw new SluiceConfigException(
                    "sluice.default-tier",
                    "default tier '" + p.getDefaultTier() + "' is not one of sluice.tiers " + p.getTiers()
                            + ": add it there or choose one of them");
        }
        List<RateLimitRule> rules = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < p.getRules().size(); i++) {
            RuleSpec r = p.getRules().get(i);
            String path = "sluice.rules[" + i + "]";
            String name = r.getName() == null || r.getName().isBlank()
                    ? "rule-" + i
                    : r.getName().strip();
            if (!names.add(name)) {
                throw new SluiceConfigException(
                        path + ".name",
                        "two rules are named '" + name + "': give each rule a distinct name, it prefixes its keys");
            }
            RateLimitRule.Builder b = RateLimitRule.named(name);
            try {
                b.paths(r.getPaths().toArray(String[]::new));
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigException(path + ".paths", String.valueOf(e.getMessage()));
            }
            b.methods(r.getMethods().toArray(String[]::new));
            b.key(key(path + ".key", r.getKey()));
            int ways = (r.isEmpty() ? 0 : 1)
                    + (r.getLimit() != null ? 1 : 0)
                    + (r.getTiers().isEmpty() ? 0 : 1);
            boolean inFlightOnly = ways == 0 && r.getMaxInFlight() != null && r.getCostAfter() == null;
            if (ways != 1 && !inFlightOnly) {
                throw new SluiceConfigException(
                        path,
                        (ways == 0
                                        ? "rule '" + name + "' has no limit"
                                        : "rule '" + name
                                                + "' has more than one of an inline limit, 'limit' and 'tiers'")
                                + ": give exactly one of requests_per_unit + unit (inline), limit: <name in sluice.limits>,"
                                + " or tiers: {free: <limit>, pro: <limit>}"
                                + (ways == 0 && r.getCostAfter() == null ? ", or max-in-flight: <n> alone" : ""));
            }
            if (inFlightOnly) {
                // limits work in flight only
            } else if (!r.isEmpty()) {
                b.limit(limit(path, r).named(name));
            } else if (r.getLimit() != null) {
                b.limit(named(path + ".limit", r.getLimit(), limits));
            } else {
                if (tiers.isEmpty()) {
                    throw new SluiceConfigException(
                            path + ".tiers",
                            "rule '" + name + "' has tiers "
                                    + r.getTiers().keySet() + " but sluice.tiers declares none: add sluice.tiers: "
                                    + r.getTiers().keySet());
                }
                for (Map.Entry<String, String> t : r.getTiers().entrySet()) {
                    String tierPath = path + ".tiers." + t.getKey();
                    if (!tiers.contains(t.getKey())) {
                        throw new SluiceConfigException(
                                tierPath,
                                "unknown tier '" + t.getKey() + "': declare it in sluice.tiers (now " + p.getTiers()
                                        + ") or remove it");
                    }
                    b.tier(t.getKey(), named(tierPath, t.getValue(), limits));
                }
                if (!r.getTiers().containsKey(p.getDefaultTier())) {
                    throw new SluiceConfigException(
                            path + ".tiers",
                            "rule '" + name + "' has no limit for the default" + " tier '" + p.getDefaultTier()
                                    + "': add tiers." + p.getDefaultTier() + ": <limit>");
                }
            }
            CostAfterProperties after = r.getCostAfter();
            if (after != null) {
                b.costAfter(costAfter(path, r, after));
            } else if (r.getCostHeader() != null && !r.getCostHeader().isBlank()) {
                b.cost(CostResolver.fromHeader(r.getCostHeader().strip(), r.getCost()));
            } else {
                try {
                    b.cost(r.getCost());
                } catch (IllegalArgumentException e) {
                    throw new SluiceConfigException(path + ".cost", String.valueOf(e.getMessage()));
                }
            }
            inFlight(path, r, b);
            try {
                rules.add(b.build());
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigException(
                        path + (after != null ? ".cost-after.estimate" : ".cost"), String.valueOf(e.getMessage()));
            }
        }
        return rules;
    }

    private static CostAfter costAfter(String path, RuleSpec r, CostAfterProperties a) {
        String at = path + ".cost-after";
        if (r.getCost() != 1 || (r.getCostHeader() != null && !r.getCostHeader().isBlank())) {
            throw new SluiceConfigException(
                    at,
                    "both cost/cost-header and cost-after: with cost-after the cost is its estimate; move the cost to"
                            + " cost-after.estimate (and a cost header to cost-after.estimate-header)");
        }
        if (a.getEstimate() == null) {
            throw new SluiceConfigException(
                    at + ".estimate",
                    "missing: the permits reserved before the request goes on, e.g. estimate: 500 (what a request is"
                            + " expected to use; the settle charges or gives back the difference)");
        }
        CostAfter c;
        try {
            long estimate = a.getEstimate();
            c = a.getEstimateHeader() != null && !a.getEstimateHeader().isBlank()
                    ? CostAfter.estimate(
                            CostResolver.fromHeader(a.getEstimateHeader().strip(), estimate))
                    : CostAfter.estimate(estimate);
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigException(at + ".estimate", String.valueOf(e.getMessage()));
        }
        try {
            c = c.attribute(a.getAttribute());
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigException(at + ".attribute", String.valueOf(e.getMessage()));
        }
        if (a.getHeader() != null) {
            try {
                c = c.header(a.getHeader());
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigException(at + ".header", String.valueOf(e.getMessage()));
            }
        }
        try {
            return c.settleWithin(a.getSettleWithin());
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigException(at + ".settle-within", String.valueOf(e.getMessage()));
        }
    }

    private static void inFlight(String path, RuleSpec r, RateLimitRule.Builder b) {
        if (r.getMaxInFlight() != null) {
            try {
                b.maxInFlight(r.getMaxInFlight());
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigException(path + ".max-in-flight", String.valueOf(e.getMessage()));
            }
        }
        try {
            b.inFlightLease(r.getInFlightLease());
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigException(path + ".in-flight-lease", String.valueOf(e.getMessage()));
        }
    }

    private static Limit named(String path, String name, Map<String, Limit> limits) {
        Limit l = limits.get(name);
        if (l == null) {
            throw new SluiceConfigException(
                    path,
                    "unknown limit '" + name + "': define it under sluice.limits." + name
                            + (limits.isEmpty() ? "" : " or use one of " + limits.keySet()));
        }
        return l;
    }

    static KeyResolver key(String path, @Nullable String key) {
        String k = key == null ? "ip" : key.strip();
        String lower = k.toLowerCase(Locale.ROOT);
        if (lower.startsWith("header:") && k.length() > "header:".length()) {
            return KeyResolver.header(k.substring("header:".length()).strip());
        }
        return switch (lower) {
            case "ip" -> KeyResolver.clientIp();
            case "user", "principal" -> KeyResolver.principal();
            case "path" -> KeyResolver.path();
            case "route" -> KeyResolver.route();
            case "global" -> KeyResolver.global();
            default ->
                throw new SluiceConfigException(
                        path, "unknown key '" + key + "': use ip, user, header:<Header-Name>, path, route or global");
        };
    }

    static Limit limit(String path, LimitProperties s) {
        Algorithm algorithm = Algorithm.FIXED_WINDOW;
        if (s.getAlgorithm() != null) {
            try {
                algorithm = Algorithm.fromConfigName(s.getAlgorithm());
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigException(path + ".algorithm", String.valueOf(e.getMessage()));
            }
        }
        if (s.getRequestsPerUnit() == null) {
            throw new SluiceConfigException(
                    path + ".requests_per_unit",
                    "missing: say how many requests, e.g." + " requests_per_unit: 100 with unit: minute");
        }
        Duration window;
        if (s.getUnit() != null && s.getWindow() != null) {
            throw new SluiceConfigException(
                    path + ".window",
                    "both 'unit' and 'window': give one (window: 90s is" + " any length, unit is the service's)");
        } else if (s.getUnit() != null) {
            try {
                window = RateUnit.fromConfigName(s.getUnit()).length();
            } catch (IllegalArgumentException e) {
                throw new SluiceConfigException(path + ".unit", String.valueOf(e.getMessage()));
            }
        } else if (s.getWindow() != null) {
            window = s.getWindow();
        } else {
            throw new SluiceConfigException(
                    path + ".unit", "missing: give unit (second, minute, hour, day) or" + " window (e.g. 90s)");
        }
        try { // LimitSpec refuses a burst on an algorithm without one, naming it
            return new LimitSpec(algorithm, s.getRequestsPerUnit(), window, s.getBurst()).toLimit();
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigException(path, String.valueOf(e.getMessage()));
        }
    }
}
