package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.LogThrottle;
import dev.sluice.server.CheckResult.Code;
import dev.sluice.server.CheckResult.Outcome;
import dev.sluice.server.CheckResult.Status;
import dev.sluice.server.config.DomainRules;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.Rule;
import dev.sluice.server.config.RuleSet;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Turns a {@link CheckRequest} into a {@link CheckResult}: match each descriptor to its rule (envoy's rules),
 * apply {@code replaces}, then ask the store.
 *
 * <h2>How a request is decided</h2>
 * <ol>
 *   <li>Each descriptor is matched in its domain ({@link DomainRules#match}); a descriptor that carries its own
 *       limit uses that instead. Rules named in another matched rule's {@code replaces} are dropped.</li>
 *   <li>Unlimited, blocked ({@code requests_per_unit: 0}) and unmatched descriptors are answered here, without
 *       the store; descriptors with {@code hits: 0} are check-only: {@link RateLimiter#peek(String, Limit, long)}
 *       with cost 1, nothing consumed (see <em>Check only</em> below).</li>
 *   <li>If that already denies the request, nothing is taken for the others (outcome {@code skipped}).
 *       Otherwise every enforced descriptor with {@code hits > 0} goes to the store in <em>one</em>
 *       all-or-nothing call, {@link RateLimiter#tryAcquire(List)}: when any is over its limit, nothing is
 *       consumed for any of them (envoy, by contrast, counts the others). A single descriptor uses the
 *       single-permit call and gets its exact decision. With several, the overall code is that atomic decision;
 *       each descriptor's numbers (limit, remaining, reset) are then read with a {@code peek} of that descriptor
 *       <em>right after</em> the decision, not atomically with it: a concurrent request on the same key may
 *       already show in them. A descriptor is OVER_LIMIT when its own hits do not fit; should none appear so (room
 *       freed in between), the denial is reported on the tightest one with the atomic decision's numbers.</li>
 *   <li>Shadow-mode descriptors are evaluated on their own, one {@code tryAcquire} each: they count every
 *       request like real limits, so the metrics show what enforcement would do, but they never deny and never
 *       block the enforced ones.</li>
 * </ol>
 *
 * <h2>Check only</h2>
 * {@code hits: 0} asks "would the next request pass?": {@code peek} with cost 1, so at exactly the limit
 * (remaining 0) the answer is OVER_LIMIT with the time until one permit is free. envoyproxy/ratelimit instead adds
 * 0 to its counter and compares, which answers OK at exactly the limit and OVER_LIMIT only beyond it; since a
 * Sluice denial takes nothing, a counter never goes beyond its limit, so that reading would never deny. To ask about
 * more than one permit without taking them, use {@link #peek(CheckRequest)} ({@code POST /v1/peek}), where
 * {@code hits} is the cost asked about. A store whose peek throws {@link UnsupportedOperationException} makes such
 * requests fail with {@link UnsupportedByStoreException} (501 / UNIMPLEMENTED), before anything is taken.
 *
 * <p>The store key of a descriptor is its domain and its entries as sent ({@code api|plan=free|user=42}), so every
 * distinct value of a key-only rule gets its own bucket, as in envoy; state is per (key, limit), so changing a
 * rule's numbers starts fresh buckets for it. Keys longer than the store's 4096-character bound are replaced by
 * their SHA-256.
 *
 * <h2>Store failures</h2>
 * Memory decisions run on the calling (event-loop) thread: they never block. Remote stores run on a bounded
 * executor. {@code sluice serve} wraps them in a {@link FailSafeRateLimiter}: each store call is bounded by the
 * store's own time budget ({@code --store-timeout}), and when the store times out, is down or fails, the failure
 * policy decides instead (fail open, fail closed, local limits) and the decision says so
 * ({@link Decision#degradation()}, shown as {@code degraded} in the answer). So a decision does not fail because of
 * the store. What remains a 503 / UNAVAILABLE ({@link StoreUnavailableException}):
 * <ul>
 *   <li>{@code reset}, which has no policy to apply (a reset that did not happen must not look as if it had);</li>
 *   <li>the bounded pool is full ({@code store-overloaded}): the service itself is overloaded;</li>
 *   <li>the service's own deadline passes ({@code store-timeout}): a budget per store call the request makes plus
 *       {@value #DEADLINE_SLACK_MILLIS} ms; only a store that broke its budget, or a backed-up pool, gets there;</li>
 *   <li>a store not wrapped in a policy (embedding the service with a bare store) that throws.</li>
 * </ul>
 */
public final class DecisionService {
    /**
     * How long past the budgets of a request's store calls the service waits before it answers 503
     * {@code store-timeout} itself. The stores bound each call to their budget plus a few milliseconds of their
     * own, so this only catches a store that hangs; it is generous because on a starved CPU (a GC pause, a noisy
     * neighbour) a late decision, exact or by the policy, is still a better answer than a 503.
     */
    public static final long DEADLINE_SLACK_MILLIS = 1000;

    private final RateLimiter limiter;
    private final String storeName;
    private final ExecutorService storeExecutor;
    private final long storeTimeoutNanos;
    private final ServerMetrics metrics;
    private final int maxDescriptors;
    private final AtomicReference<RuleSet> rules;
    private final LogThrottle logThrottle = new LogThrottle();
    private final Set<Limit> clientLimits = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile int maxClientLimits = 1024;

    /**
     * @param storeExecutor null to decide on the caller's thread (the in-memory store); otherwise the bounded
     *                      pool remote stores block on
     */
    public DecisionService(RateLimiter limiter, String storeName, RuleSet rules, ExecutorService storeExecutor,
                           long storeTimeoutNanos, int maxDescriptors, ServerMetrics metrics) {
        this.limiter = limiter;
        this.storeName = storeName;
        this.rules = new AtomicReference<>(rules);
        this.storeExecutor = storeExecutor;
        this.storeTimeoutNanos = storeTimeoutNanos;
        this.maxDescriptors = maxDescriptors;
        this.metrics = metrics;
    }

    /**
     * Bounds the distinct limits callers may send ({@code descriptors[].limit}); 0 refuses them. Stores keep
     * per-limit bookkeeping (the in-memory store at most 32,767 distinct limits, forever), so an unbounded stream of
     * made-up limits from callers must not be able to exhaust it.
     */
    public void maxClientLimits(int max) {
        this.maxClientLimits = max;
    }

    public RuleSet rules() {
        return rules.get();
    }

    /** Swaps in new rules atomically (hot reload). */
    public void rules(RuleSet next) {
        rules.set(next);
    }

    /** Shared by the endpoints to keep store-failure logging bounded. */
    public LogThrottle logThrottle() {
        return logThrottle;
    }

    public ServerMetrics metrics() {
        return metrics;
    }

    public int maxDescriptors() {
        return maxDescriptors;
    }

    public RateLimiter limiter() {
        return limiter;
    }

    public String storeName() {
        return storeName;
    }

    private static final Limit READY_PROBE = Limit.fixedWindow(Limit.MAX_WINDOW_PERMITS, java.time.Duration.ofSeconds(1));

    /**
     * Readiness: one decision on a probe key under a limit no caller uses, under the store budget. Completes with
     * that decision, {@linkplain Decision#degraded() degraded} when the failure policy answered for the store
     * (the service is still ready: it answers every request, by its policy), and exceptionally
     * ({@link StoreUnavailableException}) when not even that was possible.
     */
    public CompletableFuture<Decision> probe() {
        return run(1, () -> limiter.tryAcquire("sluice:readyz", READY_PROBE, 1));
    }

    /** The failure-safe wrapper around the store, or null when the store is used bare (the in-memory store). */
    public FailSafeRateLimiter failSafe() {
        return limiter instanceof FailSafeRateLimiter f ? f : null;
    }

    /**
     * Decides asynchronously. The future fails with {@link BadRequestException} for bad input,
     * {@link StoreUnavailableException} when the store pool is full, the service's deadline passes or a bare store
     * (no failure policy) fails, and {@link UnsupportedByStoreException} when a check-only descriptor meets a store
     * without peek; never with anything else.
     */
    public CompletableFuture<CheckResult> check(CheckRequest request) {
        Plan plan;
        try {
            plan = plan(request);
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
        return decideAsync(plan);
    }

    /**
     * Check only, for any cost ({@code POST /v1/peek}): every limited descriptor is looked at with
     * {@link RateLimiter#peek(String, Limit, long)} for its {@code hits} (default 1, at least 1) and nothing is
     * consumed; the answer is what {@link #check} would answer for the same request, the statuses' numbers being the
     * state as it is. Fails like {@link #check}.
     */
    public CompletableFuture<CheckResult> peek(CheckRequest request) {
        Plan plan;
        try {
            plan = plan(request, Mode.PEEK);
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
        return decideAsync(plan);
    }

    private CompletableFuture<CheckResult> decideAsync(Plan plan) {
        if (!plan.needsStore()) {
            try {
                return CompletableFuture.completedFuture(decide(plan));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(translate(e));
            }
        }
        return run(plan.storeCalls(), () -> decide(plan));
    }

    private RuntimeException translate(Throwable t) {
        if (t instanceof BadRequestException || t instanceof StoreUnavailableException
                || t instanceof UnsupportedByStoreException) {
            return (RuntimeException) t;
        }
        if (t instanceof IllegalArgumentException || t instanceof UnsupportedOperationException) {
            return new BadRequestException("invalid-request", t.getMessage());
        }
        if (t instanceof StoreException e) {
            // what the failure policy does not absorb (reset) or a bare store: the store's own classification
            Degradation cause = e.degradation();
            metrics.storeError(cause == Degradation.STORE_ERROR ? "error" : cause.label());
            return new StoreUnavailableException(problemType(cause), "the " + storeName + " store failed ("
                    + cause.label() + "): " + (t.getMessage() == null ? "no detail (see the service log)"
                    : t.getMessage()), t);
        }
        metrics.storeError("error");
        return new StoreUnavailableException("store-error", "the " + storeName + " store failed: "
                + (t.getMessage() == null ? "no detail (see the service log)" : t.getMessage()), t);
    }

    /** The service's deadline for work making {@code storeCalls} sequential store calls (saturating). */
    private long deadlineNanos(int storeCalls) {
        long slack = TimeUnit.MILLISECONDS.toNanos(DEADLINE_SLACK_MILLIS);
        long calls = Math.max(1, storeCalls);
        return storeTimeoutNanos > (Long.MAX_VALUE - slack) / calls ? Long.MAX_VALUE : storeTimeoutNanos * calls + slack;
    }

    /** The 503 problem type for a store failure: {@code store-timeout}, {@code store-unavailable}, … */
    static String problemType(Degradation cause) {
        return "store-" + cause.label().replace('_', '-').replace("store-", "");
    }

    /**
     * Forgets the state of each descriptor's (key, limit): {@code POST /v1/reset}. Descriptors without a limit
     * (no rule, unlimited, blocked) are skipped.
     */
    public CompletableFuture<Void> reset(CheckRequest request) {
        Plan plan;
        try {
            plan = plan(request, Mode.RESET);
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
        return run(plan.items().size(), () -> {
            for (Item it : plan.items()) {
                if (it.limit != null) {
                    limiter.reset(it.key, it.limit);
                }
            }
            return null;
        });
    }

    /**
     * Shaping ({@code POST /v1/reserve}): takes the descriptor's hits now, from the future if need be, when they
     * can be had within {@code maxWaitNanos}; the decision's {@code retryAfter} is how long to wait before acting.
     * One descriptor, token_bucket or gcra only (see {@link RateLimiter#reserve}).
     */
    public CompletableFuture<CheckResult> reserve(CheckRequest request, long maxWaitNanos) {
        Plan plan;
        try {
            if (request.descriptors() != null && request.descriptors().size() != 1) {
                throw new BadRequestException("invalid-request", "reserve takes exactly one descriptor, not "
                        + request.descriptors().size());
            }
            plan = plan(request, Mode.DECIDE);
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
        Item it = plan.items().get(0);
        if (it.kind != Kind.ENFORCED && it.kind != Kind.SHADOW) {
            return CompletableFuture.failedFuture(new BadRequestException("invalid-request",
                    "reserve needs a descriptor with a limit and hits ≥ 1; this one matched " + (it.rule == null
                    ? "no rule" : it.rule.kind().name().toLowerCase(java.util.Locale.ROOT) + " rule " + it.rule.id())));
        }
        return run(1, () -> {
            Decision d = limiter.reserve(it.key, it.limit, it.hits, java.time.Duration.ofNanos(maxWaitNanos));
            Status st = status(it, d, d.allowed() ? Outcome.OK : Outcome.OVER_LIMIT, true);
            metrics.decision(plan.metricDomain(), it.metricRule, st.outcome());
            return new CheckResult(d.allowed(), List.of(st), d);
        });
    }

    /**
     * Runs {@code work}, which makes at most {@code storeCalls} store calls, on the store pool; the service's
     * deadline is that many budgets plus {@link #DEADLINE_SLACK_MILLIS} (the calls are sequential, and each is
     * bounded by the store's budget).
     */
    private <T> CompletableFuture<T> run(int storeCalls, java.util.function.Supplier<T> work) {
        if (storeExecutor == null) {
            try {
                return CompletableFuture.completedFuture(work.get());
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(translate(e));
            }
        }
        CompletableFuture<T> f;
        try {
            f = CompletableFuture.supplyAsync(work, storeExecutor);
        } catch (RejectedExecutionException e) {
            metrics.storeError("overloaded");
            return CompletableFuture.failedFuture(new StoreUnavailableException("store-overloaded",
                    "the " + storeName + " store has too many requests waiting: retry shortly", e));
        }
        long deadline = deadlineNanos(storeCalls);
        return f.orTimeout(deadline, TimeUnit.NANOSECONDS).handle((r, t) -> {
            if (t == null) {
                return r;
            }
            Throwable c = t instanceof CompletionException ? t.getCause() : t;
            if (c instanceof TimeoutException) {
                metrics.storeError("timeout");
                throw new CompletionException(new StoreUnavailableException("store-timeout", "the " + storeName
                        + " store did not answer within " + TimeUnit.NANOSECONDS.toMillis(deadline) + " ms (" + storeCalls
                        + " call(s) of its budget, --store-timeout " + TimeUnit.NANOSECONDS.toMillis(storeTimeoutNanos)
                        + " ms, plus " + DEADLINE_SLACK_MILLIS + " ms)", c));
            }
            throw new CompletionException(translate(c));
        });
    }

    // ---- planning: everything that can be decided or refused without the store

    private enum Kind { NONE, UNLIMITED, BLOCKED, ENFORCED, SHADOW, PEEK }

    /** What a request asks of the store: decide ({@code /v1/check}, {@code /v1/reserve}), look, or forget. */
    private enum Mode { DECIDE, PEEK, RESET }

    private record Item(Kind kind, Rule rule, Limit limit, String key, long hits, String metricRule) {
        /** The cost a PEEK item asks about: its hits, or 1 for {@code hits: 0} (would the next request pass?). */
        long peekCost() {
            return Math.max(1, hits);
        }
    }

    private record Plan(String metricDomain, List<Item> items) {
        /**
         * The most store calls deciding this plan makes: one per check-only or shadow descriptor, one for the
         * enforced ones, and with several enforced ones a peek each for their own numbers.
         */
        int storeCalls() {
            int enforced = 0;
            int others = 0;
            for (Item i : items) {
                if (i.kind == Kind.ENFORCED) {
                    enforced++;
                } else if (i.kind == Kind.SHADOW || i.kind == Kind.PEEK) {
                    others++;
                }
            }
            return others + (enforced == 0 ? 0 : enforced == 1 ? 1 : 1 + enforced);
        }

        boolean needsStore() {
            for (Item i : items) {
                if (i.kind == Kind.ENFORCED || i.kind == Kind.SHADOW || i.kind == Kind.PEEK) {
                    return true;
                }
            }
            return false;
        }
    }

    private Plan plan(CheckRequest request) {
        return plan(request, Mode.DECIDE);
    }

    private Plan plan(CheckRequest request, Mode mode) {
        boolean deciding = mode != Mode.RESET;
        String domain = request.domain();
        if (domain == null || domain.isEmpty()) {
            throw new BadRequestException("missing-domain", "'domain' is missing: name the rules domain, e.g. \"api\"");
        }
        List<CheckRequest.Descriptor> ds = request.descriptors();
        if (ds == null || ds.isEmpty()) {
            throw new BadRequestException("missing-descriptors",
                    "'descriptors' is empty: send at least one, e.g. [{\"entries\":[{\"key\":\"user\",\"value\":\"42\"}]}]");
        }
        if (ds.size() > maxDescriptors) {
            throw new BadRequestException("too-many-descriptors", ds.size() + " descriptors in one request: at most "
                    + maxDescriptors + " (--max-descriptors)");
        }
        RuleSet rs = rules.get();
        DomainRules dr = rs.domain(domain);
        boolean allOverridden = ds.stream().allMatch(d -> d.override() != null);
        if (dr == null && !allOverridden) {
            throw new BadRequestException("unknown-domain", "unknown domain '" + domain + "': configured domains are "
                    + rs.domains().keySet().stream().sorted().toList());
        }
        Rule[] matched = new Rule[ds.size()];
        Set<String> replaced = new HashSet<>();
        for (int i = 0; i < ds.size(); i++) {
            CheckRequest.Descriptor d = ds.get(i);
            if (d.entries() == null || d.entries().isEmpty()) {
                throw new BadRequestException("empty-descriptor", "descriptors[" + i
                        + "] has no entries: give at least one {\"key\":…,\"value\":…}");
            }
            if (d.hits() < 0) {
                throw new BadRequestException("invalid-hits", "descriptors[" + i + "]: hits " + d.hits()
                        + " is negative: use 0 (check only) or more");
            }
            if (mode == Mode.PEEK && d.hits() == 0) {
                throw new BadRequestException("invalid-hits", "descriptors[" + i + "]: hits 0 asks about nothing: "
                        + "peek takes the cost to ask about as hits (1 or more; default 1)");
            }
            if (d.override() != null) {
                Limit l = d.override();
                if (maxClientLimits == 0) {
                    throw new BadRequestException("client-limits-disabled", "descriptors[" + i
                            + "] sends its own limit, which this service refuses (--max-client-limits 0): "
                            + "use the configured rules");
                }
                if (!clientLimits.contains(l)) {
                    synchronized (clientLimits) {
                        if (clientLimits.size() >= maxClientLimits && !clientLimits.contains(l)) {
                            throw new BadRequestException("too-many-client-limits", "descriptors[" + i
                                    + "] sends a new limit " + l + " but callers already use " + clientLimits.size()
                                    + " distinct limits, the most this service accepts (--max-client-limits): reuse limits");
                        }
                        clientLimits.add(l);
                    }
                }
                matched[i] = new Rule(domain + ".override", null, List.of(), Rule.Kind.LIMITED, l, l.algorithm(),
                        l.rate().permits(), null, l.rate().period(), l.capacity(), false, false, "request");
            } else {
                matched[i] = dr.match(d.entries());
                if (matched[i] != null) {
                    replaced.addAll(matched[i].replaces());
                }
            }
        }
        List<Item> items = new ArrayList<>(ds.size());
        for (int i = 0; i < ds.size(); i++) {
            CheckRequest.Descriptor d = ds.get(i);
            Rule r = matched[i];
            if (r != null && r.name() != null && replaced.contains(r.name())) {
                r = null; // envoy: a replaced rule is not evaluated and its counter is left alone
            }
            if (r == null) {
                items.add(new Item(Kind.NONE, null, null, null, d.hits(), "none"));
                continue;
            }
            String metricRule = r.detailedMetric() ? detailedLabel(domain, d.entries()) : r.id();
            switch (r.kind()) {
                case UNLIMITED -> items.add(new Item(Kind.UNLIMITED, r, null, null, d.hits(), metricRule));
                case BLOCKED -> items.add(new Item(Kind.BLOCKED, r, null, null, d.hits(), metricRule));
                case LIMITED -> {
                    String key = storeKey(domain, d.entries());
                    long hits = d.hits();
                    try {
                        if (hits > 0 && deciding) {
                            Permit.check(key, r.limit(), hits);
                        }
                    } catch (IllegalArgumentException e) {
                        throw new BadRequestException("invalid-hits", "descriptors[" + i + "] (rule " + r.id()
                                + "): " + e.getMessage());
                    }
                    Kind kind = hits == 0 || mode == Mode.PEEK ? Kind.PEEK
                            : r.shadowMode() ? Kind.SHADOW : Kind.ENFORCED;
                    items.add(new Item(kind, r, r.limit(), key, hits, metricRule));
                }
                default -> throw new IllegalStateException("unknown rule kind " + r.kind());
            }
        }
        // a domain without rules (caller-sent limits only) is named by the caller: keep it out of metric labels
        return new Plan(dr != null ? domain : "_client", items);
    }

    // ---- deciding: the store calls

    private CheckResult decide(Plan plan) {
        List<Item> items = plan.items();
        Status[] out = new Status[items.size()];
        boolean allowed = true;
        List<Integer> enforced = new ArrayList<>(items.size());
        Decision atomic = null;
        // 1. what needs no store, and the check-only looks: they decide whether the enforced ones may be taken
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            switch (it.kind) {
                case NONE -> out[i] = new Status(Code.OK, Outcome.NO_RULE, null, null, null, it.hits, it.metricRule, true);
                case UNLIMITED -> out[i] = new Status(Code.OK, Outcome.UNLIMITED, it.rule, null, null, it.hits,
                        it.metricRule, true);
                case BLOCKED -> {
                    long w = it.rule.window().toNanos();
                    Decision d = new Decision(false, 0, 0, w, w);
                    boolean shadow = it.rule.shadowMode();
                    out[i] = new Status(shadow ? Code.OK : Code.OVER_LIMIT,
                            shadow ? Outcome.SHADOW_OVER_LIMIT : Outcome.BLOCKED, it.rule, null, d, it.hits,
                            it.metricRule, true);
                    allowed &= shadow;
                }
                case PEEK -> {
                    Decision d = peek(it, it.peekCost());
                    boolean shadow = it.rule.shadowMode();
                    Code code = d.allowed() || shadow ? Code.OK : Code.OVER_LIMIT;
                    out[i] = new Status(code, Outcome.CHECKED, it.rule, it.limit, d, it.hits, it.metricRule, true);
                    allowed &= code == Code.OK;
                }
                case ENFORCED -> enforced.add(i);
                case SHADOW -> {
                    // below
                }
                default -> throw new IllegalStateException("unknown kind " + it.kind);
            }
        }
        // 2. the enforced descriptors, all or nothing; not even tried when the request is already denied
        if (!allowed) {
            for (int i : enforced) {
                Item it = items.get(i);
                out[i] = new Status(Code.OK, Outcome.SKIPPED, it.rule, it.limit, null, it.hits, it.metricRule, true);
            }
        } else if (enforced.size() == 1) {
            int i = enforced.get(0);
            Item it = items.get(i);
            Decision d = limiter.tryAcquire(it.key, it.limit, it.hits);
            out[i] = status(it, d, d.allowed() ? Outcome.OK : Outcome.OVER_LIMIT, true);
            allowed = d.allowed();
        } else if (enforced.size() > 1) {
            atomic = acquireAll(items, enforced, out);
            allowed = atomic.allowed();
        }
        // 3. shadow-mode descriptors, each on its own: they count every request and never deny
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            if (it.kind == Kind.SHADOW) {
                Decision d = limiter.tryAcquire(it.key, it.limit, it.hits);
                out[i] = new Status(Code.OK, d.allowed() ? Outcome.OK : Outcome.SHADOW_OVER_LIMIT, it.rule,
                        it.limit, d, it.hits, it.metricRule, true);
            }
        }
        // the answer's decision: the all-or-nothing one (not a fold of the per-descriptor looks taken after it),
        // with whatever else counts (check-only looks, blocked rules)
        Decision combined = atomic;
        for (int i = 0; i < out.length; i++) {
            Status s = out[i];
            metrics.decision(plan.metricDomain(), s.metricRule(), s.outcome());
            boolean counts = s.decision() != null && s.outcome() != Outcome.SHADOW_OVER_LIMIT
                    && !(s.rule() != null && s.rule().shadowMode()) && !(atomic != null && enforced.contains(i));
            if (counts) {
                combined = combined == null ? s.decision() : combined.mostRestrictive(s.decision());
            }
        }
        return new CheckResult(allowed, List.of(out), combined);
    }

    /** Several enforced descriptors in one all-or-nothing store call; fills their statuses, returns the decision. */
    private Decision acquireAll(List<Item> items, List<Integer> enforced, Status[] out) {
        List<Permit> permits = new ArrayList<>(enforced.size());
        for (int i : enforced) {
            Item it = items.get(i);
            permits.add(new Permit(it.key, it.limit, it.hits));
        }
        Decision combined = limiter.tryAcquire(permits);
        boolean allowed = combined.allowed();
        boolean detailed = true;
        for (int i : enforced) {
            Item it = items.get(i);
            // after the decision, not atomically with it: this descriptor's state now. Peeking for its own hits
            // gives the same limit, remaining and reset as a peek for 1 (they describe the state as it is), and
            // tells whether this descriptor alone could take its hits (its code and retry when denied).
            Decision now = detail(it);
            if (now == null) {
                detailed = false;
                break;
            }
            boolean over = !allowed && now.denied();
            Decision shown = allowed ? new Decision(true, now.limit(), now.remaining(), 0, now.resetAfterNanos())
                    : now;
            out[i] = status(it, shown, over ? Outcome.OVER_LIMIT : Outcome.OK, true);
        }
        if (!detailed) {
            // the store cannot peek (or failed to, after deciding): only the atomic decision is known
            for (int i : enforced) {
                out[i] = status(items.get(i), combined, allowed ? Outcome.OK : Outcome.OVER_LIMIT, false);
            }
            return combined;
        }
        if (!allowed && enforced.stream().noneMatch(i -> out[i].code() == Code.OVER_LIMIT)) {
            // another request freed room after the denial: report the denial on the tightest descriptor
            int tight = enforced.get(0);
            for (int i : enforced) {
                if (out[i].decision().remaining() < out[tight].decision().remaining()) {
                    tight = i;
                }
            }
            out[tight] = status(items.get(tight), combined, Outcome.OVER_LIMIT, false);
        }
        return combined;
    }

    /** A check-only look at one descriptor; a store without peek is a 501 / UNIMPLEMENTED, not a bad request. */
    private Decision peek(Item it, long cost) {
        try {
            return limiter.peek(it.key, it.limit, cost);
        } catch (UnsupportedOperationException e) {
            throw new UnsupportedByStoreException("peek-unsupported", "the " + storeName + " store cannot answer "
                    + "check-only requests (hits 0, /v1/peek): it does not implement peek"
                    + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")") + "; send hits ≥ 1 to /v1/check", e);
        }
    }

    /**
     * Per-descriptor detail after a multi-descriptor decision, or null when the store cannot give it: the decision
     * is already made (and its permits possibly taken), so a failing look must not fail the request.
     */
    private Decision detail(Item it) {
        try {
            return limiter.peek(it.key, it.limit, it.hits);
        } catch (UnsupportedOperationException e) {
            return null;
        } catch (RuntimeException e) {
            metrics.storeError("detail");
            if (logThrottle.allow("detail")) {
                org.slf4j.LoggerFactory.getLogger(DecisionService.class).warn(
                        "event=detail_unavailable store={} cause=\"{}\" suppressed_since_last={}", storeName, e,
                        logThrottle.suppressedSinceLast());
            }
            return null;
        }
    }

    private static Status status(Item it, Decision d, Outcome outcome, boolean detailed) {
        return new Status(outcome == Outcome.OVER_LIMIT ? Code.OVER_LIMIT : Code.OK, outcome, it.rule, it.limit, d,
                it.hits, it.metricRule, detailed);
    }

    /** {@code domain|key=value|key=value}, with {@code \ | =} escaped; SHA-256 when over the store's bound. */
    static String storeKey(String domain, List<Entry> entries) {
        StringBuilder sb = new StringBuilder(domain.length() + 16 * entries.size());
        escape(sb, domain);
        for (Entry e : entries) {
            sb.append('|');
            escape(sb, e.key());
            sb.append('=');
            escape(sb, e.value());
        }
        if (sb.length() <= Permit.MAX_KEY_LENGTH) {
            return sb.toString();
        }
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
            return domain.length() > 256 ? "#" + HexFormat.of().formatHex(h)
                    : domain + "|#" + HexFormat.of().formatHex(h);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void escape(StringBuilder sb, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' || c == '|' || c == '=') {
                sb.append('\\');
            }
            sb.append(c);
        }
    }

    private static String detailedLabel(String domain, List<Entry> entries) {
        StringBuilder sb = new StringBuilder(domain);
        for (Entry e : entries) {
            sb.append('.').append(e.key());
            if (!e.value().isEmpty()) {
                sb.append('_').append(e.value());
            }
        }
        return sb.toString();
    }
}
