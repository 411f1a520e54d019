package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.LogThrottle;
import dev.sluice.http.RateLimitFields;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A servlet filter that rate-limits requests by {@link RateLimitRule}s on any {@link RateLimiter} (memory, Redis,
 * PostgreSQL, the remote service).
 *
 * <p>Every rule that matches a request (path, method) and yields a key contributes one permit; the filter takes
 * them all or none with {@link RateLimiter#tryAcquire(List)}, so a request is never half-counted. An allowed
 * request goes on with a {@code RateLimit} header; a denied one is answered {@code 429} with
 * {@code application/problem+json} (RFC 9457), {@code Retry-After} (whole seconds, rounded up: a client that waits
 * them is never early) and {@code RateLimit} / {@code RateLimit-Policy} (IETF httpapi draft,
 * {@link RateLimitFields}). When several rules applied, {@code RateLimit-Policy} lists each and {@code RateLimit}
 * describes the limit that decided (the one with the fewest permits left), as only the combined decision is known.
 *
 * <p>{@link #setEnabled(boolean) The off switch} lets every request through untouched. {@link #setShadowMode(boolean)
 * Shadow mode} decides as usual, logs the requests it would have denied and lets them through, adding no header, so
 * that rules can be tried on live traffic without clients seeing anything.
 *
 * <p>Failures: a store's failure policy applies (wrap a remote store in {@code FailSafeRateLimiter}); a degraded
 * decision is applied as decided, logged (rate-limited) and available in the request attribute
 * {@value #DECISION_ATTRIBUTE}; a degraded denial says so in its problem body ({@code "degradation":"timeout"}). If the limiter throws anyway, the request goes on and the failure is logged,
 * at most a few lines a second: a rate limiter must not take the application down. A request whose cost could
 * never be granted (below 1, above the capacity) is answered {@code 400}.
 */
public final class RateLimitFilter implements Filter {
    /** Request attribute holding the {@link Decision} applied to the request, when a rule applied. */
    public static final String DECISION_ATTRIBUTE = "dev.sluice.servlet.decision";
    /** Default request attribute naming the caller's tier, set by the application's authentication. */
    public static final String DEFAULT_TIER_ATTRIBUTE = "sluice.tier";

    private static final String APPLIED_ATTRIBUTE = "dev.sluice.servlet.applied";
    static final String PROBLEM_JSON = "application/problem+json";
    private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

    private final RateLimiter limiter;
    private final List<RateLimitRule> rules;
    private final ClientIpResolver clientIp;
    private final String tierAttribute;
    private final String defaultTier;
    private final String problemType;
    private final RateLimitListener listener;
    /** By identity: two rules' equal limits have their own names, so their own items. */
    private final IdentityHashMap<Limit, String> policyItems = new IdentityHashMap<>();

    private final LogThrottle logThrottle = new LogThrottle();
    private volatile boolean enabled;
    private volatile boolean shadowMode;

    private RateLimitFilter(Builder b) {
        this.limiter = b.limiter;
        this.rules = List.copyOf(b.rules);
        this.clientIp = b.clientIp;
        this.tierAttribute = b.tierAttribute;
        this.defaultTier = b.defaultTier;
        this.problemType = b.problemType;
        this.listener = b.listener;
        this.enabled = b.enabled;
        this.shadowMode = b.shadowMode;
        for (RateLimitRule r : rules) {
            // the header items of every limit, spelled once here rather than per request
            Limit one = r.limit();
            if (one != null) {
                policyItems.put(one, policyItem(one));
            }
            r.tiers().values().forEach(l -> policyItems.put(l, policyItem(l)));
        }
    }

    /** Starts a filter deciding with {@code limiter}. */
    public static Builder builder(RateLimiter limiter) {
        return new Builder(limiter);
    }

    /** The off switch: when false, every request goes through untouched. */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isEnabled() {
        return enabled;
    }

    /** When true, would-be denials are logged and let through, and no header is added. */
    public void setShadowMode(boolean shadowMode) {
        this.shadowMode = shadowMode;
    }

    public boolean isShadowMode() {
        return shadowMode;
    }

    public List<RateLimitRule> rules() {
        return rules;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        if (!enabled
                || !(req instanceof HttpServletRequest request)
                || !(res instanceof HttpServletResponse response)
                || request.getAttribute(APPLIED_ATTRIBUTE) != null) {
            chain.doFilter(req, res);
            return;
        }
        request.setAttribute(APPLIED_ATTRIBUTE, true); // a forward or include is not counted again
        AppliedRules applied = applyRules(request);
        if (applied == null) {
            chain.doFilter(req, res);
            return;
        }
        if (applied.badCost != null) {
            listen(request, applied, RateLimitListener.Outcome.BAD_COST, null);
            ProblemJson.write(response, problemType, 400, "Bad Request", applied.badCost, path(request), null, 0, null);
            return;
        }
        Decision d;
        try {
            d = applied.size() == 1
                    ? limiter.tryAcquire(applied.keys.get(0), applied.limits.get(0), applied.costs[0])
                    : limiter.tryAcquire(applied.permits());
        } catch (RuntimeException e) {
            if (logThrottle.allow("failed")) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "rate limiter failed; letting " + request.getMethod() + " " + applied.path + " through"
                                + leftOut(),
                        e);
            }
            listen(request, applied, RateLimitListener.Outcome.LIMITER_FAILED, null);
            chain.doFilter(req, res);
            return;
        }
        request.setAttribute(DECISION_ATTRIBUTE, d);
        if (d.degraded() && logThrottle.allow("degraded")) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "decision for " + applied.names + " made without the store ("
                            + d.degradation().label() + "): " + d + leftOut());
        }
        if (d.allowed()) {
            if (!shadowMode) {
                response.setHeader(RateLimitFields.STATE, state(applied, d));
            }
            listen(request, applied, RateLimitListener.Outcome.ALLOWED, d);
            chain.doFilter(req, res);
        } else if (shadowMode) {
            if (logThrottle.allow("shadow")) {
                LOG.log(
                        System.Logger.Level.INFO,
                        "shadow mode: would deny " + request.getMethod() + " "
                                + applied.path + " by " + applied.names + " for "
                                + RateLimitRule.nameOf(owner(applied, d)) + ": " + d
                                + leftOut());
            }
            listen(request, applied, RateLimitListener.Outcome.SHADOW_DENIED, d);
            chain.doFilter(req, res);
        } else {
            listen(request, applied, RateLimitListener.Outcome.DENIED, d);
            StringBuilder policy = new StringBuilder();
            Set<Limit> listed = Collections.newSetFromMap(new IdentityHashMap<>());
            for (Limit l : applied.limits) {
                if (listed.add(l)) { // each limit's item once
                    if (policy.length() > 0) {
                        policy.append(", ");
                    }
                    policy.append(policyItems.get(l));
                }
            }
            response.setHeader(RateLimitFields.POLICY, policy.toString());
            response.setHeader(RateLimitFields.STATE, state(applied, d));
            long retry = RateLimitFields.retryAfterSeconds(d);
            response.setHeader(RateLimitFields.RETRY_AFTER, Long.toString(retry));
            String limitName = RateLimitRule.nameOf(owner(applied, d));
            String detail = d.degraded()
                    ? "Rate limit '" + limitName + "' could not be checked ("
                            + d.degradation().label() + ") and the failure policy denies: retry in " + retry + " s."
                    : "Rate limit '" + limitName + "' exceeded: retry in " + retry + " s.";
            ProblemJson.write(
                    response,
                    problemType,
                    429,
                    "Too Many Requests",
                    detail,
                    path(request),
                    limitName,
                    retry,
                    d.degraded() ? d.degradation().label() : null);
        }
    }

    /** The rules that apply to the request and their permits, or null when none does. */
    private @Nullable AppliedRules applyRules(HttpServletRequest request) {
        String method = request.getMethod();
        String path = path(request);
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
            Object tier = rule.tiers().isEmpty() ? null : request.getAttribute(tierAttribute);
            Limit limit = rule.limitFor(tier == null ? null : tier.toString(), defaultTier);
            long cost = rule.fixedCost() > 0 ? rule.fixedCost() : rule.cost().cost(request);
            if (applied == null) {
                applied = new AppliedRules(path, rules.size());
            }
            if (cost < 1 || cost > limit.capacity()) {
                applied.badCost = "cost " + cost + " of rule '" + rule.name() + "' "
                        + (cost < 1
                                ? "must be at least 1"
                                : "exceeds capacity " + limit.capacity() + " of limit '" + limit.name()
                                        + "': it can never be granted; send a smaller cost");
            }
            applied.add(rule.name(), key(rule.name(), value), limit, cost);
        }
        return applied;
    }

    /** {@code rule:value}; a value that would make the key too long is replaced by its SHA-256. */
    static String key(String rule, String value) {
        return Permit.boundedKey(rule + ':', value);
    }

    private static String path(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String info = request.getPathInfo();
        String p = info == null ? servletPath : servletPath == null ? info : servletPath + info;
        return p == null || p.isEmpty() ? "/" : p;
    }

    private String state(AppliedRules applied, Decision d) {
        return RateLimitFields.appendState(new StringBuilder(), RateLimitRule.nameOf(owner(applied, d)), d)
                .toString();
    }

    /** The limit a combined decision belongs to: the first whose capacity is the decision's. */
    private static Limit owner(AppliedRules applied, Decision d) {
        for (Limit l : applied.limits) {
            if (l.capacity() == d.limit()) {
                return l;
            }
        }
        return applied.limits.get(0);
    }

    private static String policyItem(Limit l) {
        return RateLimitFields.appendPolicy(new StringBuilder(), RateLimitRule.nameOf(l), l)
                .toString();
    }

    private void listen(
            HttpServletRequest request, AppliedRules applied, RateLimitListener.Outcome outcome, @Nullable Decision d) {
        try {
            listener.onDecision(request, applied.names, outcome, d);
        } catch (RuntimeException e) {
            if (logThrottle.allow("listener")) {
                LOG.log(System.Logger.Level.WARNING, "rate limit listener failed; ignored" + leftOut(), e);
            }
        }
    }

    private String leftOut() {
        long n = logThrottle.suppressedSinceLast();
        return n == 0 ? "" : " (" + n + " similar lines left out)";
    }

    /** Builds a {@link RateLimitFilter}. */
    public static final class Builder {
        private final RateLimiter limiter;
        private final List<RateLimitRule> rules = new ArrayList<>();
        private ClientIpResolver clientIp = ClientIpResolver.peerOnly();
        private String tierAttribute = DEFAULT_TIER_ATTRIBUTE;
        private String defaultTier = "free";
        private String problemType = "about:blank";
        private RateLimitListener listener = RateLimitListener.NONE;
        private boolean enabled = true;
        private boolean shadowMode;

        private Builder(RateLimiter limiter) {
            this.limiter =
                    Objects.requireNonNull(limiter, "limiter must not be null: e.g. InMemoryRateLimiter.create()");
        }

        /** Adds a rule; rules apply in the order given and together (all or nothing). */
        public Builder rule(RateLimitRule rule) {
            rules.add(Objects.requireNonNull(rule, "rule"));
            return this;
        }

        /** Honour {@code X-Forwarded-For} from these proxies (see {@link ClientIpResolver}). */
        public Builder trustedProxies(String... blocks) {
            return clientIp(ClientIpResolver.trusting(ClientIpResolver.Header.X_FORWARDED_FOR, List.of(blocks)));
        }

        /** How client addresses are found; default: the connection's peer, no header trusted. */
        public Builder clientIp(ClientIpResolver resolver) {
            this.clientIp = Objects.requireNonNull(resolver, "client ip resolver");
            return this;
        }

        /** The request attribute naming the caller's tier (its {@code toString()}); default {@value #DEFAULT_TIER_ATTRIBUTE}. */
        public Builder tierAttribute(String name) {
            this.tierAttribute = Objects.requireNonNull(name, "tier attribute");
            return this;
        }

        /** The tier of callers without the attribute or with a tier a rule does not know; default {@code free}. */
        public Builder defaultTier(String tier) {
            this.defaultTier = Objects.requireNonNull(tier, "default tier");
            return this;
        }

        /** The problem {@code type} URI of 429 and 400 answers; default {@code about:blank}. */
        public Builder problemType(String uri) {
            this.problemType = Objects.requireNonNull(uri, "problem type");
            return this;
        }

        public Builder listener(RateLimitListener l) {
            this.listener = Objects.requireNonNull(l, "listener");
            return this;
        }

        public Builder enabled(boolean on) {
            this.enabled = on;
            return this;
        }

        public Builder shadowMode(boolean on) {
            this.shadowMode = on;
            return this;
        }

        /**
         * The filter.
         *
         * @throws IllegalArgumentException when two rules share a name, or a tiered rule has no limit for the
         *     default tier
         */
        public RateLimitFilter build() {
            Set<String> names = new HashSet<>();
            for (RateLimitRule r : rules) {
                if (!names.add(r.name())) {
                    throw new IllegalArgumentException("two rules are named '" + r.name()
                            + "': give each a distinct name, it prefixes their keys");
                }
                if (!r.tiers().isEmpty() && !r.tiers().containsKey(defaultTier)) {
                    throw new IllegalArgumentException(
                            "rule '" + r.name() + "' has tiers " + r.tiers().keySet()
                                    + " but none for the default tier '" + defaultTier + "': add .tier(\"" + defaultTier
                                    + "\", limit) or set defaultTier to one of them");
                }
            }
            return new RateLimitFilter(this);
        }
    }
}
