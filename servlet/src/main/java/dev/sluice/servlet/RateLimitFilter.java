package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.LogThrottle;
import dev.sluice.servlet.RateLimitListener.Outcome;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
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
 * {@link dev.sluice.http.RateLimitFields}). When several rules applied, {@code RateLimit-Policy} lists each and {@code RateLimit}
 * describes the limit that decided (the one with the fewest permits left), as only the combined decision is known.
 *
 * <p><b>Costs known afterwards and work in flight.</b> A rule with a {@link CostAfter} reserves its estimate before
 * the request goes on ({@link RateLimiter#tryAcquireEstimate}) and settles it when the response ends on the actual
 * cost the application reports in a request attribute or a response header; a rule with a {@link
 * RateLimitRule.Builder#maxInFlight max in flight} holds a slot of its key ({@link RateLimiter#inFlight()}) until the
 * response ends, and answers {@code 429} with {@code Retry-After: 1} beyond it. The response ends when the chain
 * returns or throws, or, for a request gone asynchronous (streamed), when its asynchronous cycle completes, fails or
 * times out. All or nothing still: the slots are taken first, then the estimates, then the permits known up front
 * (together, as above); when a step denies, what the steps before it took is given back (slots released, estimates
 * settled at 0, which gives back what each algorithm can: see {@link RateLimiter#settle}), so a denied request
 * holds nothing. One random UUID per request is its reservation id and its slot holder id.
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
    private final RateLimitAnswers answers;

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
        this.answers = new RateLimitAnswers(rules, problemType);
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
        request.setAttribute(APPLIED_ATTRIBUTE, true); // a forward, include or async dispatch is not counted again
        AppliedRules applied = AppliedRules.match(request, path(request), rules, clientIp, tierAttribute, defaultTier);
        if (applied == null) {
            chain.doFilter(req, res);
            return;
        }
        if (applied.badCost != null) {
            listen(request, applied, Outcome.BAD_COST, null);
            ProblemJson.write(response, problemType, 400, "Bad Request", applied.badCost, path(request), null, 0, null);
            return;
        }
        RequestHolds holds = applied.holds() ? new RequestHolds(limiter, request, response, this::warn) : null;
        // slots first, then estimates, then the permits known up front: what a later step denies, the earlier
        // steps give back (slots released, estimates settled at 0), so a request is never half-counted
        Decision d;
        boolean shadowDenied = false;
        try {
            for (AppliedRules.Slot slot : applied.slots) {
                Decision s = Objects.requireNonNull(holds).take(slot);
                if (s.denied()) {
                    if (!shadowMode) {
                        holds.undo();
                        listen(request, applied, Outcome.DENIED, s);
                        answers.inFlightDenied(response, path(request), slot, s);
                        return;
                    }
                    shadowDenied = true;
                    logShadow(request, applied, "max in flight of rule '" + slot.rule() + "'", s);
                }
            }
            d = decide(applied, holds);
        } catch (RuntimeException e) {
            warn("rate limiter failed; letting " + request.getMethod() + " " + applied.path + " through", e);
            listen(request, applied, Outcome.LIMITER_FAILED, null);
            goOn(request, response, chain, holds); // with whatever slots and reservations it holds, given back after
            return;
        }
        if (d != null) {
            request.setAttribute(DECISION_ATTRIBUTE, d);
            if (d.degraded() && logThrottle.allow("degraded")) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "decision for " + applied.names + " made without the store ("
                                + d.degradation().label() + "): " + d + leftOut());
            }
        }
        if (d == null || d.allowed()) {
            if (d != null && !shadowMode) {
                answers.allowed(response, applied, d);
            }
            listen(request, applied, shadowDenied ? Outcome.SHADOW_DENIED : Outcome.ALLOWED, d);
        } else if (shadowMode) {
            logShadow(request, applied, RateLimitRule.nameOf(RateLimitAnswers.owner(applied, d)), d);
            listen(request, applied, Outcome.SHADOW_DENIED, d);
        } else {
            if (holds != null) {
                holds.undo();
            }
            listen(request, applied, Outcome.DENIED, d);
            answers.denied(response, path(request), applied, d);
            return;
        }
        goOn(request, response, chain, holds);
    }

    /**
     * The decision of the rate limits (estimates, then the permits known up front, each only when what came
     * before allowed), or null when the request's rules limit work in flight only.
     */
    private @Nullable Decision decide(AppliedRules applied, @Nullable RequestHolds holds) {
        List<Decision> all = new ArrayList<>(applied.estimates.size() + 1);
        for (AppliedRules.Estimate e : applied.estimates) {
            Decision r = Objects.requireNonNull(holds).reserve(e);
            if (r.denied()) {
                return r; // nothing more taken (a shadow denial goes on with nothing reserved for this one)
            }
            all.add(r);
        }
        int n = applied.upFront.size();
        if (n > 0) {
            Permit p = applied.upFront.get(0);
            all.add(n == 1 ? limiter.tryAcquire(p.key(), p.limit(), p.cost()) : limiter.tryAcquire(applied.upFront));
        }
        return all.isEmpty() ? null : all.size() == 1 ? all.get(0) : Decision.mostRestrictive(all);
    }

    /**
     * Runs the rest of the chain; what the request holds is given back when its response ends: when the chain
     * returns or throws, or, once the request went asynchronous, when its asynchronous cycle ends.
     */
    private static void goOn(
            HttpServletRequest request, HttpServletResponse response, FilterChain chain, @Nullable RequestHolds holds)
            throws IOException, ServletException {
        if (holds == null) {
            chain.doFilter(request, response);
            return;
        }
        boolean async = false;
        try {
            chain.doFilter(request, response);
            if (request.isAsyncStarted()) {
                try {
                    request.getAsyncContext().addListener(holds);
                    async = true;
                } catch (IllegalStateException e) { // its asynchronous cycle is over already: it has ended
                    async = false;
                }
            }
        } finally {
            if (!async) {
                holds.finish();
            }
        }
    }

    private void logShadow(HttpServletRequest request, AppliedRules applied, String what, Decision d) {
        if (logThrottle.allow("shadow")) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "shadow mode: would deny " + request.getMethod() + " " + applied.path + " by " + applied.names
                            + " for " + what + ": " + d + leftOut());
        }
    }

    private void warn(String message, RuntimeException e) {
        if (logThrottle.allow("failed")) {
            LOG.log(System.Logger.Level.WARNING, message + leftOut(), e);
        }
    }

    /** {@code rule:value}; a value that would make the key too long is replaced by its SHA-256. */
    static String key(String rule, String value) {
        return Permit.boundedKey(rule + ':', value);
    }

    static String path(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String info = request.getPathInfo();
        String p = info == null ? servletPath : servletPath == null ? info : servletPath + info;
        return p == null || p.isEmpty() ? "/" : p;
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
         *     default tier, or a rule has a max in flight and the limiter does not limit work in flight
         */
        public RateLimitFilter build() {
            Set<String> names = new HashSet<>();
            for (RateLimitRule r : rules) {
                if (r.maxInFlight() > 0) {
                    checkInFlight(limiter, r);
                }
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

        /** A max in flight on a limiter without slots fails here, not as a let-through on every request. */
        private static void checkInFlight(RateLimiter limiter, RateLimitRule r) {
            try {
                limiter.inFlight();
            } catch (UnsupportedOperationException e) {
                throw new IllegalArgumentException(
                        r + " has a max in flight, but " + limiter.getClass().getSimpleName()
                                + " does not limit work in flight (" + e.getMessage() + "): use a store of Sluice,"
                                + " or leave maxInFlight out",
                        e);
            }
        }
    }
}
