package dev.sluice.servlet;

import dev.sluice.Limit;
import dev.sluice.Permit;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What the rules that apply to one request take: permits whose cost is known up front, estimates settled when the
 * response ends (rules with a {@link CostAfter}), and slots of work in flight (rules with a max in flight).
 */
final class AppliedRules {
    final String path;
    /** Every rule that applied, in order. */
    final List<String> names;
    /** Every rate limit that applied (up front and estimates), for the headers. */
    final List<Limit> limits;

    final List<Permit> upFront;
    final List<Estimate> estimates = new ArrayList<>(1);
    final List<Slot> slots = new ArrayList<>(1);
    /** Why a rule's cost can never be granted (answered 400), or null. */
    @Nullable
    String badCost;

    /** A cost reserved on an estimate before the request goes on and settled when its response ends. */
    record Estimate(String key, Limit limit, long estimate, CostAfter after) {}

    /** A slot of work in flight, held from before the request goes on until its response ends. */
    record Slot(String rule, String key, long max, Duration lease) {}

    AppliedRules(String path, int capacity) {
        this.path = path;
        this.names = new ArrayList<>(capacity);
        this.limits = new ArrayList<>(capacity);
        this.upFront = new ArrayList<>(capacity);
    }

    void add(String key, Limit limit, long cost, @Nullable CostAfter after) {
        limits.add(limit);
        if (after == null) {
            upFront.add(Permit.of(key, limit, cost));
        } else {
            estimates.add(new Estimate(key, limit, cost, after));
        }
    }

    /** Whether anything must be given back or settled when the response ends. */
    boolean holds() {
        return !estimates.isEmpty() || !slots.isEmpty();
    }

    /** The rules that apply to the request and their permits, or null when none does. */
    static @Nullable AppliedRules match(
            HttpServletRequest request,
            String path,
            List<RateLimitRule> rules,
            ClientIpResolver clientIp,
            String tierAttribute,
            String defaultTier) {
        String method = request.getMethod();
        AppliedRules applied = null;
        RequestFactsOnce facts = null;
        for (RateLimitRule rule : rules) {
            String pattern = rule.match(method, path);
            if (pattern == null) {
                continue;
            }
            if (facts == null) {
                facts = new RequestFactsOnce(request, path, clientIp);
            }
            facts.pattern = pattern;
            String value = rule.key().resolve(request, facts);
            if (value == null) {
                continue;
            }
            if (applied == null) {
                applied = new AppliedRules(path, rules.size());
            }
            applied.names.add(rule.name());
            String key = RateLimitFilter.key(rule.name(), value);
            if (rule.maxInFlight() > 0) {
                applied.slots.add(new AppliedRules.Slot(rule.name(), key, rule.maxInFlight(), rule.inFlightLease()));
            }
            if (!rule.limitsRate()) {
                continue;
            }
            Object tier = rule.tiers().isEmpty() ? null : request.getAttribute(tierAttribute);
            Limit limit = rule.limitFor(tier == null ? null : tier.toString(), defaultTier);
            long cost = rule.fixedCost() > 0 ? rule.fixedCost() : rule.cost().cost(request);
            if (cost < 1 || cost > limit.capacity()) {
                applied.badCost = "cost " + cost + " of rule '" + rule.name() + "' "
                        + (cost < 1
                                ? "must be at least 1"
                                : "exceeds capacity " + limit.capacity() + " of limit '" + limit.name()
                                        + "': it can never be granted; send a smaller cost");
            } else {
                applied.add(key, limit, cost, rule.costAfter());
            }
        }
        return applied;
    }
}
