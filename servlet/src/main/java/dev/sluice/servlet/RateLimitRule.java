package dev.sluice.servlet;

import dev.sluice.Limit;
import dev.sluice.Settlement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * One rule of a {@link RateLimitFilter}: which requests (path patterns, methods), counted by which key, under
 * which limit (one for everyone, or one per tier such as free/pro), at what cost. Every rule that matches a
 * request contributes one permit, and the filter takes them all or none, so a per-IP and a per-user rule on the
 * same path are enforced together.
 *
 * <p>Two more kinds of limit: a cost known only when the response ends ({@link Builder#costAfter(CostAfter)}:
 * reserved on an estimate, settled on the actual), and at most so many requests in flight per key at once ({@link
 * Builder#maxInFlight(long)}: a slot per request, held until its response ends). A rule may have a max in flight
 * alone, without a rate limit.
 *
 * <pre>{@code
 * RateLimitRule.named("per-user")
 *     .paths("/api/**").methods("POST")
 *     .key(KeyResolver.principal())
 *     .tier("free", Limit.tokenBucket(10, Rate.perMinute(10)))
 *     .tier("pro", Limit.tokenBucket(100, Rate.perMinute(100)))
 *     .build();
 * }</pre>
 */
public final class RateLimitRule {
    private final String name;
    private final List<PathPattern> paths;
    private final Set<String> methods;
    private final KeyResolver key;
    /** Null when the rule has tiers. */
    private final @Nullable Limit limit;

    private final Map<String, Limit> tiers;
    private final CostResolver cost;
    private final long fixedCost;
    private final @Nullable CostAfter costAfter;
    private final long maxInFlight;
    private final Duration inFlightLease;

    /**
     * How long a request's in-flight slot is held at most if its release never comes (the process died): longer
     * than the longest response, streamed ones included, since a request still running past it no longer counts.
     */
    public static final Duration DEFAULT_IN_FLIGHT_LEASE = Duration.ofMinutes(10);

    private RateLimitRule(Builder b) {
        this.name = b.name;
        this.paths = List.copyOf(b.paths);
        this.methods = Collections.unmodifiableSet(new TreeSet<>(b.methods));
        this.key = b.key;
        this.limit = b.limit == null ? null : b.limit.name() == null ? b.limit.named(b.name) : b.limit;
        Map<String, Limit> t = new LinkedHashMap<>();
        b.tiers.forEach((tier, l) -> t.put(tier, l.name() == null ? l.named(b.name + "/" + tier) : l));
        this.tiers = Collections.unmodifiableMap(t);
        this.cost = b.cost;
        this.fixedCost = b.fixedCost;
        this.costAfter = b.costAfter;
        this.maxInFlight = b.maxInFlight;
        this.inFlightLease = b.inFlightLease;
    }

    /** Starts a rule; the name labels its keys, its {@code RateLimit-Policy} item and its metrics. */
    public static Builder named(String name) {
        return new Builder(name);
    }

    public String name() {
        return name;
    }

    public List<PathPattern> paths() {
        return paths;
    }

    /** Upper-case method names; empty means every method. */
    public Set<String> methods() {
        return methods;
    }

    public KeyResolver key() {
        return key;
    }

    /** Whether the rule limits a rate (it may limit work in flight only). */
    boolean limitsRate() {
        return limit != null || !tiers.isEmpty();
    }

    /** The cost known afterwards, or null when the cost is known up front. */
    public @Nullable CostAfter costAfter() {
        return costAfter;
    }

    /** The most requests in flight at once per key, or 0 when the rule does not limit them. */
    public long maxInFlight() {
        return maxInFlight;
    }

    /** How long an in-flight slot is held at most when its release never comes. */
    public Duration inFlightLease() {
        return inFlightLease;
    }

    /** The limit for everyone, or null when the rule has tiers or limits work in flight only. */
    public @Nullable Limit limit() {
        return limit;
    }

    /** Tier name → limit; empty when the rule has one limit. */
    public Map<String, Limit> tiers() {
        return tiers;
    }

    public CostResolver cost() {
        return cost;
    }

    /** The fixed cost, or 0 when it comes from the request. */
    long fixedCost() {
        return fixedCost;
    }

    /** The limit for {@code tier} (or the default tier's when the rule has no such tier). */
    Limit limitFor(@Nullable String tier, String defaultTier) {
        if (limit != null) {
            return limit;
        }
        Limit l = tier == null ? null : tiers.get(tier);
        return l != null
                ? l
                : Objects.requireNonNull(tiers.get(defaultTier), "the filter checked every rule has the default tier");
    }

    /** The name of one of the rule's limits: the rule names each one it was given without a name. */
    static String nameOf(Limit l) {
        return Objects.requireNonNull(l.name(), "a rule's limits are named");
    }

    /** The matching pattern, or null when the request is not the rule's. */
    @Nullable
    String match(String method, String path) {
        if (!methods.isEmpty() && !methods.contains(method)) {
            return null;
        }
        if (paths.isEmpty()) {
            return "/**";
        }
        for (PathPattern p : paths) {
            if (p.matches(path)) {
                return p.toString();
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "rule '" + name + "'";
    }

    /** Builds a {@link RateLimitRule}. */
    public static final class Builder {
        private final String name;
        private final List<PathPattern> paths = new ArrayList<>();
        private final Set<String> methods = new TreeSet<>();
        private KeyResolver key = KeyResolver.clientIp();
        private @Nullable Limit limit;
        private final Map<String, Limit> tiers = new LinkedHashMap<>();
        private CostResolver cost = CostResolver.fixed(1);
        private long fixedCost = 1;
        private boolean costGiven;
        private @Nullable CostAfter costAfter;
        private long maxInFlight;
        private Duration inFlightLease = DEFAULT_IN_FLIGHT_LEASE;

        private Builder(String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("rule name '" + name + "' is empty: name every rule, e.g. per-ip");
            }
            this.name = name.strip();
        }

        /** Ant-style patterns ({@code /api/**}); none means every path. */
        public Builder paths(String... patterns) {
            for (String p : patterns) {
                paths.add(PathPattern.of(p));
            }
            return this;
        }

        /** HTTP methods; none means every method. */
        public Builder methods(String... names) {
            for (String m : names) {
                methods.add(m.strip().toUpperCase(Locale.ROOT));
            }
            return this;
        }

        /** What to count by; default {@link KeyResolver#clientIp()}. */
        public Builder key(KeyResolver resolver) {
            this.key = Objects.requireNonNull(resolver, "key resolver must not be null: e.g. KeyResolver.clientIp()");
            return this;
        }

        /** One limit for every request the rule matches. */
        public Builder limit(Limit l) {
            this.limit = Objects.requireNonNull(l, "limit must not be null");
            return this;
        }

        /** The limit for requests of {@code tier} (see {@link RateLimitFilter.Builder#tierAttribute}). */
        public Builder tier(String tier, Limit l) {
            tiers.put(Objects.requireNonNull(tier, "tier name"), Objects.requireNonNull(l, "limit"));
            return this;
        }

        /** Every request spends {@code permits}; default 1. */
        public Builder cost(long permits) {
            this.cost = CostResolver.fixed(permits);
            this.fixedCost = permits;
            this.costGiven = true;
            return this;
        }

        /** The cost comes from the request. */
        public Builder cost(CostResolver resolver) {
            this.cost = Objects.requireNonNull(resolver, "cost resolver");
            this.fixedCost = 0;
            this.costGiven = true;
            return this;
        }

        /**
         * The cost is known only when the response ends: each request is reserved at the estimate and settled on
         * the actual cost the application reports (see {@link CostAfter}). The estimate is then the rule's cost.
         */
        public Builder costAfter(CostAfter after) {
            this.costAfter = Objects.requireNonNull(after, "cost after");
            return this;
        }

        /**
         * At most {@code max} requests of one key in flight at once (concurrent requests per API key): a request
         * holds a slot from before it goes on until its response ends (an asynchronous one included), and one
         * beyond the maximum is answered 429. A slot whose release never comes is freed when {@link
         * #inFlightLease(Duration) its lease} ends.
         */
        public Builder maxInFlight(long max) {
            if (max < 1) {
                throw new IllegalArgumentException("rule '" + name + "': max in flight " + max
                        + " must be at least 1 (leave it out for no limit on requests in flight)");
            }
            this.maxInFlight = max;
            return this;
        }

        /** How long a slot is held at most; default {@link #DEFAULT_IN_FLIGHT_LEASE}. */
        public Builder inFlightLease(Duration lease) {
            Settlement.checkWithin("rule '" + name + "': in-flight lease", lease);
            this.inFlightLease = lease;
            return this;
        }

        /**
         * The rule.
         *
         * @throws IllegalArgumentException when the rule has no limit (and no max in flight), or both a limit and
         *     tiers, or a fixed cost above a limit's capacity, or both a cost and a cost after
         */
        public RateLimitRule build() {
            if (limit == null && tiers.isEmpty() && (maxInFlight == 0 || costAfter != null)) {
                throw new IllegalArgumentException("rule '" + name + "' has no limit: give .limit(...) or one"
                        + " .tier(name, limit) per tier" + (costAfter != null ? " (a cost after needs one)" : "")
                        + (maxInFlight == 0 && costAfter == null ? ", or .maxInFlight(n)" : ""));
            }
            if (costAfter != null) {
                if (costGiven) {
                    throw new IllegalArgumentException("rule '" + name + "' has both .cost(...) and .costAfter(...):"
                            + " give the estimate in CostAfter.estimate(...), it is the cost reserved up front");
                }
                cost = costAfter.estimate();
                fixedCost = costAfter.fixedEstimate();
            }
            if (limit != null && !tiers.isEmpty()) {
                throw new IllegalArgumentException(
                        "rule '" + name + "' has both a limit and tiers " + tiers.keySet() + ": give one or the other");
            }
            if (fixedCost > 0) {
                if (limit != null) {
                    limit.checkCost(fixedCost);
                }
                tiers.values().forEach(l -> l.checkCost(fixedCost));
            }
            return new RateLimitRule(this);
        }
    }
}
