package dev.sluice.spring;

import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.servlet.ClientIpResolver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Everything under {@code sluice.*}. The limit vocabulary is the service's ({@code requests_per_unit}, {@code unit}
 * or {@code window}, {@code algorithm}, {@code burst}); Spring's relaxed binding accepts it in snake_case as the
 * service writes it, or in kebab-case as IDEs complete it.
 *
 * <pre>
 * sluice:
 *   rules:
 *     - name: per-ip
 *       paths: /api/**
 *       requests_per_unit: 100
 *       unit: minute
 * </pre>
 */
@ConfigurationProperties(prefix = "sluice")
public class SluiceProperties {

    /** Whether Sluice limits anything; false registers no limiter and no filter. */
    private boolean enabled = true;

    /** Decide and log would-be denials, but let every request through and add no header. */
    private boolean shadowMode = false;

    /**
     * Where limits are kept: "memory" (this process), a "redis://host:port" or "rediss://" URI (needs
     * dev.sluice:sluice-redis), or "datasource" (the application's DataSource, PostgreSQL or YugabyteDB; needs
     * dev.sluice:sluice-postgres).
     */
    private String store = "memory";

    /** What decides when a remote store cannot (down, slow, failing): allow, deny, or an in-memory limiter. */
    private FailurePolicy failurePolicy = FailurePolicy.FAIL_OPEN;

    /**
     * Time budget of one decision on a remote store, connection and retries included (a call returns within it
     * plus about 2 ms); empty = the store's default (1 s for Redis and PostgreSQL).
     */
    private @Nullable Duration budget;

    /** While a remote store is unhealthy, how often one request tries it again. */
    private Duration probeInterval = Duration.ofMillis(200);

    /**
     * Proxies and load balancers whose forwarding header is believed, as address blocks (10.0.0.0/8, 192.0.2.7,
     * fd00::/8). Empty: the connection's peer is the client and forwarding headers are ignored.
     */
    private List<String> trustedProxies = new ArrayList<>();

    /** The forwarding header the trusted proxies write: x-forwarded-for or forwarded (RFC 7239). */
    private ClientIpResolver.Header forwardedHeader = ClientIpResolver.Header.X_FORWARDED_FOR;

    /** The tier names rules may use in their "tiers" (for example free, pro). */
    private List<String> tiers = new ArrayList<>();

    /** The tier of callers whose request has no tier attribute, or one no rule knows. */
    private String defaultTier = "free";

    /** The request attribute the application's authentication sets to the caller's tier. */
    private String tierAttribute = "sluice.tier";

    /** Named limits that rules refer to with "limit" or "tiers". */
    private Map<String, LimitProperties> limits = new LinkedHashMap<>();

    /** The rules; every rule that matches a request applies, all or nothing. */
    private List<RuleSpec> rules = new ArrayList<>();

    /** The "type" URI of problem+json answers (429, 400). */
    private String problemType = "about:blank";

    /** Order of the filter among servlet filters; the default runs it just after Spring Security (-100). */
    private int filterOrder = -90;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isShadowMode() {
        return shadowMode;
    }

    public void setShadowMode(boolean shadowMode) {
        this.shadowMode = shadowMode;
    }

    public String getStore() {
        return store;
    }

    public void setStore(String store) {
        this.store = store;
    }

    public FailurePolicy getFailurePolicy() {
        return failurePolicy;
    }

    public void setFailurePolicy(FailurePolicy failurePolicy) {
        this.failurePolicy = failurePolicy;
    }

    public @Nullable Duration getBudget() {
        return budget;
    }

    public void setBudget(@Nullable Duration budget) {
        this.budget = budget;
    }

    public Duration getProbeInterval() {
        return probeInterval;
    }

    public void setProbeInterval(Duration probeInterval) {
        this.probeInterval = probeInterval;
    }

    public List<String> getTrustedProxies() {
        return trustedProxies;
    }

    public void setTrustedProxies(List<String> trustedProxies) {
        this.trustedProxies = trustedProxies;
    }

    public ClientIpResolver.Header getForwardedHeader() {
        return forwardedHeader;
    }

    public void setForwardedHeader(ClientIpResolver.Header forwardedHeader) {
        this.forwardedHeader = forwardedHeader;
    }

    public List<String> getTiers() {
        return tiers;
    }

    public void setTiers(List<String> tiers) {
        this.tiers = tiers;
    }

    public String getDefaultTier() {
        return defaultTier;
    }

    public void setDefaultTier(String defaultTier) {
        this.defaultTier = defaultTier;
    }

    public String getTierAttribute() {
        return tierAttribute;
    }

    public void setTierAttribute(String tierAttribute) {
        this.tierAttribute = tierAttribute;
    }

    public Map<String, LimitProperties> getLimits() {
        return limits;
    }

    public void setLimits(Map<String, LimitProperties> limits) {
        this.limits = limits;
    }

    public List<RuleSpec> getRules() {
        return rules;
    }

    public void setRules(List<RuleSpec> rules) {
        this.rules = rules;
    }

    public String getProblemType() {
        return problemType;
    }

    public void setProblemType(String problemType) {
        this.problemType = problemType;
    }

    public int getFilterOrder() {
        return filterOrder;
    }

    public void setFilterOrder(int filterOrder) {
        this.filterOrder = filterOrder;
    }

    /** A limit in the service's vocabulary. */
    public static class LimitProperties {
        /** How many requests per unit (or window). */
        private @Nullable Long requestsPerUnit;

        /** The period of requests_per_unit: second, minute, hour, day (or week, month, year). */
        private @Nullable String unit;

        /** Any period instead of unit, such as 90s or 1500ms. */
        private @Nullable Duration window;

        /** token_bucket, gcra, fixed_window (the default, as in the service), sliding_window or sliding_log. */
        private @Nullable String algorithm;

        /** How many may pass at once when idle (token_bucket and gcra); defaults to requests_per_unit. */
        private @Nullable Long burst;

        public @Nullable Long getRequestsPerUnit() {
            return requestsPerUnit;
        }

        public void setRequestsPerUnit(@Nullable Long requestsPerUnit) {
            this.requestsPerUnit = requestsPerUnit;
        }

        public @Nullable String getUnit() {
            return unit;
        }

        public void setUnit(@Nullable String unit) {
            this.unit = unit;
        }

        public @Nullable Duration getWindow() {
            return window;
        }

        public void setWindow(@Nullable Duration window) {
            this.window = window;
        }

        public @Nullable String getAlgorithm() {
            return algorithm;
        }

        public void setAlgorithm(@Nullable String algorithm) {
            this.algorithm = algorithm;
        }

        public @Nullable Long getBurst() {
            return burst;
        }

        public void setBurst(@Nullable Long burst) {
            this.burst = burst;
        }

        boolean isEmpty() {
            return requestsPerUnit == null && unit == null && window == null && algorithm == null && burst == null;
        }
    }

    /** A rule: which requests, counted by what, under which limit. Its own limit fields are an inline limit. */
    public static class RuleSpec extends LimitProperties {
        /** Names the rule's keys, its RateLimit-Policy item and its metrics; default rule-N. */
        private @Nullable String name;

        /** Ant-style path patterns such as /api/**; empty means every path. */
        private List<String> paths = new ArrayList<>();

        /** HTTP methods; empty means every method. */
        private List<String> methods = new ArrayList<>();

        /**
         * What requests are counted by: ip (the client address, see trusted-proxies), user (the authenticated
         * principal; anonymous requests are skipped), header:NAME, path, route (the matching pattern) or global.
         */
        private String key = "ip";

        /** The name of a limit under sluice.limits, instead of an inline limit. */
        private @Nullable String limit;

        /** Tier name to the name of a limit under sluice.limits. */
        private Map<String, String> tiers = new LinkedHashMap<>();

        /** Permits each request spends. */
        private long cost = 1;

        /** A request header carrying the cost (for example X-Batch-Size); "cost" when absent. */
        private @Nullable String costHeader;

        /** A cost known only when the response ends (LLM tokens): reserved on an estimate, settled on the actual. */
        private @Nullable CostAfterProperties costAfter;

        /** At most this many requests of one key in flight at once (a rule may have this alone, without a rate). */
        private @Nullable Long maxInFlight;

        /** How long an in-flight slot is held at most if its release never comes; longer than the longest response. */
        private Duration inFlightLease = dev.sluice.servlet.RateLimitRule.DEFAULT_IN_FLIGHT_LEASE;

        public @Nullable String getName() {
            return name;
        }

        public void setName(@Nullable String name) {
            this.name = name;
        }

        public List<String> getPaths() {
            return paths;
        }

        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public String getKey() {
            return key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public @Nullable String getLimit() {
            return limit;
        }

        public void setLimit(@Nullable String limit) {
            this.limit = limit;
        }

        public Map<String, String> getTiers() {
            return tiers;
        }

        public void setTiers(Map<String, String> tiers) {
            this.tiers = tiers;
        }

        public long getCost() {
            return cost;
        }

        public void setCost(long cost) {
            this.cost = cost;
        }

        public @Nullable String getCostHeader() {
            return costHeader;
        }

        public void setCostHeader(@Nullable String costHeader) {
            this.costHeader = costHeader;
        }

        public @Nullable CostAfterProperties getCostAfter() {
            return costAfter;
        }

        public void setCostAfter(@Nullable CostAfterProperties costAfter) {
            this.costAfter = costAfter;
        }

        public @Nullable Long getMaxInFlight() {
            return maxInFlight;
        }

        public void setMaxInFlight(@Nullable Long maxInFlight) {
            this.maxInFlight = maxInFlight;
        }

        public Duration getInFlightLease() {
            return inFlightLease;
        }

        public void setInFlightLease(Duration inFlightLease) {
            this.inFlightLease = inFlightLease;
        }
    }
}
