package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Scheduler;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.LogThrottle;
import dev.sluice.failsafe.StoreHealth;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.DomainRules;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.config.Semantics;
import dev.sluice.server.dashboard.DeniedKeys;
import dev.sluice.server.decision.CheckResult.Outcome;
import dev.sluice.server.decision.CheckResult.Status;
import dev.sluice.server.decision.Plan.Item;
import dev.sluice.server.decision.Plan.Kind;
import dev.sluice.server.decision.Plan.Mode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Turns a {@link CheckRequest} into a {@link CheckResult}: match each descriptor to its rule (envoy's rules),
 * apply {@code replaces}, then ask the store.
 *
 * <p>A thin facade over four parts, in the order a request meets them: {@link RequestPlanner} (validation, rule
 * matching, store keys from {@link StoreKeys}: everything decided without the store), {@link StoreCalls} (where and
 * how long the store is called, and what its failures become), {@link PlanDecider} (the store calls of one plan).
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
 *       all-or-nothing call, {@link RateLimiter#tryAcquireEachAsync(List)}, one descriptor or many: when any is over
 *       its limit, nothing is consumed for any of them (envoy, by contrast, counts the others). The same call
 *       tells, atomically with that decision, each descriptor's own numbers (limit, remaining, reset, retry-after:
 *       {@link dev.sluice.PermitDecisions}); a descriptor is OVER_LIMIT exactly when its own hits do not fit (should
 *       every one fit on its own, two descriptors of one key, the denial is reported on the tightest one).</li>
 *   <li>Shadow-mode descriptors are evaluated on their own, one {@code tryAcquire} each, beside the enforced call:
 *       they count every request like real limits, so the metrics show what enforcement would do, but they never
 *       deny and never block the enforced ones.</li>
 * </ol>
 *
 * <h2>Check only</h2>
 * {@code hits: 0} asks "would the next request pass?": {@code peek} with cost 1, so at exactly the limit
 * (remaining 0) the answer is OVER_LIMIT with the time until one permit is free. envoyproxy/ratelimit instead adds
 * 0 to its counter and compares, which answers OK at exactly the limit and OVER_LIMIT only beyond it; since a
 * Sluice denial takes nothing, a counter never goes beyond its limit, so that reading would never deny. To ask about
 * more than one permit without taking them, use {@link #peek(CheckRequest)} ({@code POST /v1/peek}), where
 * {@code hits} is the cost asked about. A store whose peek throws {@link UnsupportedOperationException} makes such
 * requests fail with a {@link ServiceException} of kind {@code UNSUPPORTED} ({@code peek-unsupported}: 501 /
 * UNIMPLEMENTED), before anything is taken.
 *
 * <p>The store key of a descriptor is its domain and its entries as sent ({@code api|plan=free|user=42}), so every
 * distinct value of a key-only rule gets its own bucket, as in envoy. A rule's limit is named by the rule (its
 * {@code name}, else its domain and descriptor path), and state is per (key, limit identity): a reload that changes
 * a rule's numbers reads each key's state under the new numbers ({@link dev.sluice.algorithm.Inheritance}: what was
 * spent carries over), on every store. Keys longer than the store's 4096-character bound are replaced by
 * their SHA-256.
 *
 * <h2>Store failures</h2>
 * Every request is decided asynchronously end to end: the store's asynchronous operations are called on the calling
 * (event-loop) thread and the answer is written when they complete; no thread waits for a store. The in-memory store
 * completes at once; a remote store's future completes when it answers. {@code sluice serve} wraps a remote store in
 * a {@link FailSafeRateLimiter}: each store call is bounded by the store's own time budget ({@code --store-timeout}),
 * and when the store times out, is down, fails or is overloaded (its own bounded queue is full), the failure policy
 * decides instead (fail open, fail closed, local limits) and the decision says so ({@link Decision#degradation()},
 * shown as {@code degraded} in the answer). So a decision does not fail because of the store. What remains a 503 /
 * UNAVAILABLE (a {@link ServiceException} of one of the store's kinds):
 * <ul>
 *   <li>{@code reset}, which has no policy to apply (a reset that did not happen must not look as if it had);</li>
 *   <li>the service's own deadline passes ({@code store-timeout}): a budget per store call the request makes one
 *       after another plus {@value #DEADLINE_SLACK_MILLIS} ms; only a store that broke its budget gets there;</li>
 *   <li>a store not wrapped in a policy (embedding the service with a bare store) that throws, e.g. its
 *       {@code OVERLOADED} ({@code store-overloaded}) when its queue is full.</li>
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
    private final ServerMetrics metrics;
    private final LogThrottle logThrottle = new LogThrottle();
    private final RequestPlanner planner;
    private final StoreCalls calls;
    private final PlanDecider decider;
    private final EnvoyDecider envoyDecider;
    private final Ticker clock;
    private final DeniedKeys deniedKeys;
    private final Optional<StoreHealth> storeHealth;
    private final Settlements settlements;
    private final InFlight inFlight;

    /** With the service's deadline on {@link Scheduler#system()}'s timer. */
    public DecisionService(
            RateLimiter limiter,
            String storeName,
            RuleSet rules,
            long storeTimeoutNanos,
            int maxDescriptors,
            ServerMetrics metrics) {
        this(limiter, storeName, rules, storeTimeoutNanos, maxDescriptors, metrics, Scheduler.system());
    }

    /** @param scheduler whose timer runs the service's deadline of each request that waits for the store */
    public DecisionService(
            RateLimiter limiter,
            String storeName,
            RuleSet rules,
            long storeTimeoutNanos,
            int maxDescriptors,
            ServerMetrics metrics,
            Scheduler scheduler) {
        this.limiter = limiter;
        this.storeName = storeName;
        this.metrics = metrics;
        this.planner = new RequestPlanner(rules, maxDescriptors);
        this.calls = new StoreCalls(storeName, storeTimeoutNanos, metrics, scheduler);
        this.decider = new PlanDecider(limiter, storeName, metrics);
        // envoy's answers carry the shared count (limit_remaining), which a lease cannot know: count at the store
        RateLimiter counter = limiter instanceof LeasedRateLimiter leased ? leased.store() : limiter;
        this.envoyDecider = new EnvoyDecider(
                counter, metrics, counter == limiter ? decider : new PlanDecider(counter, storeName, metrics));
        this.clock = limiter instanceof InMemoryRateLimiter m ? m.ticker() : Ticker.system();
        this.deniedKeys = new DeniedKeys(clock);
        this.storeHealth = StoreHealth.of(limiter);
        this.settlements = new Settlements(limiter, planner, calls, metrics);
        this.inFlight = new InFlight(counter, calls, metrics.steps()); // slots are counted at the store
    }

    /** Work in flight of Sluice's own API ({@code POST /v1/in-flight/acquire}, {@code release}, {@code renew}). */
    public InFlight inFlight() {
        return inFlight;
    }

    /** Reservations and settles of Sluice's own API ({@code POST /v1/check} with a reservation, {@code /v1/settle}). */
    public Settlements settlements() {
        return settlements;
    }

    /** The keys denied most over the last minute (the dashboard's top denied keys), on {@link #clock()}. */
    public DeniedKeys deniedKeys() {
        return deniedKeys;
    }

    /** The clock of envoy's {@code duration_until_reset} (not the store's): the in-memory store's, else the system's. */
    public Ticker clock() {
        return clock;
    }

    /**
     * Bounds the distinct limits callers may send ({@code descriptors[].limit}); 0 refuses them. Stores keep
     * per-limit bookkeeping (the in-memory store at most 32,767 distinct limits, forever), so an unbounded stream of
     * made-up limits from callers must not be able to exhaust it.
     */
    public void maxClientLimits(int max) {
        planner.maxClientLimits(max);
    }

    public RuleSet rules() {
        return planner.rules();
    }

    /** Swaps in new rules atomically (hot reload). */
    public void rules(RuleSet next) {
        planner.rules(next);
    }

    /** Shared by the endpoints to keep store-failure logging bounded. */
    public LogThrottle logThrottle() {
        return logThrottle;
    }

    public ServerMetrics metrics() {
        return metrics;
    }

    public int maxDescriptors() {
        return planner.maxDescriptors();
    }

    public RateLimiter limiter() {
        return limiter;
    }

    public String storeName() {
        return storeName;
    }

    /** The key and limit of the health probe: no request's key (those always hold a '|' after the domain). */
    static final String PROBE_KEY = "sluice:readyz";

    private static final Limit PROBE_LIMIT = Limit.fixedWindow(Limit.MAX_WINDOW_PERMITS, Duration.ofSeconds(1));

    /**
     * The health probe of {@code /readyz} and of the service's own store watch: a {@link RateLimiter#peek} of a probe
     * key, which writes nothing to any store (no key or row is created, none is updated), through whatever wraps the
     * store, under the store's budget and the service's deadline. It completes with that decision,
     * {@linkplain Decision#degraded() degraded} when the failure policy answered for the store (a probe that reaches
     * the store while its circuit is open is the one that closes it once the store is back), and exceptionally
     * (a {@link ServiceException} of one of the store's kinds) when not even that was possible.
     */
    public CompletableFuture<Decision> probe() {
        return calls.run(1, () -> limiter.peekAsync(PROBE_KEY, PROBE_LIMIT, 1));
    }

    /**
     * The health of the remote store behind whatever wraps it (leases, a failure policy), asked once of the limiter
     * ({@link StoreHealth#of}); empty for a store with no failure policy in front of it (the in-memory store).
     */
    public Optional<StoreHealth> storeHealth() {
        return storeHealth;
    }

    /** What the service says of its store now, without asking it (the dashboard, {@code /healthcheck}, gRPC health). */
    public StoreReport storeReport() {
        return StoreReport.of(storeName, storeHealth);
    }

    /**
     * Decides asynchronously. The future fails with a {@link ServiceException}, never with anything else: a
     * {@link BadRequestException} for bad input; one of the store's kinds when the service's deadline passes or a
     * bare store (no failure policy) fails; {@code UNSUPPORTED} when a check-only descriptor meets a store without
     * peek, or the store or the limit's algorithm does not define the operation (a reserve on a window).
     */
    public CompletableFuture<CheckResult> check(CheckRequest request) {
        return decided(request, Mode.DECIDE, false, plan -> decide(plan, request));
    }

    /**
     * Decides a request of the Envoy APIs (gRPC {@code ShouldRateLimit}, {@code POST /json}) by the domain's
     * {@link Semantics}, else {@code fallback} (the service's): {@link Semantics#ENVOY} counts as
     * envoyproxy/ratelimit ({@link EnvoyDecider}), {@link Semantics#STRICT} as {@link #check}. Either way an
     * unknown domain limits nothing and hits above a limit are OVER_LIMIT, as envoy answers. Fails like
     * {@link #check}.
     */
    public CompletableFuture<CheckResult> checkEnvoy(CheckRequest request, Semantics fallback) {
        return checkEnvoy(request, fallback, false);
    }

    /**
     * {@link #checkEnvoy(CheckRequest, Semantics)}, with envoy's global {@code QUOTA_MODE} when {@code quotaMode}:
     * every descriptor decided with envoy's semantics is a quota descriptor ({@link EnvoyDecider}); a domain whose
     * rules say {@code semantics: strict} answers all or nothing, as it answers a {@code quota_mode} rule.
     */
    public CompletableFuture<CheckResult> checkEnvoy(CheckRequest request, Semantics fallback, boolean quotaMode) {
        if (semanticsOf(request.domain(), fallback) == Semantics.STRICT) {
            return decided(request, Mode.DECIDE, true, plan -> decide(plan, request))
                    .whenComplete(metrics::envoyStrict);
        }
        return decided(
                        request,
                        Mode.ENVOY,
                        true,
                        plan -> calls.run(
                                        EnvoyDecider.sequentialCalls(plan), () -> envoyDecider.decide(plan, quotaMode))
                                .thenApply(r -> noted(request, plan, r)))
                .whenComplete(metrics::envoyCall); // envoy's stats: its counts in EnvoyDecider, failures here
    }

    private Semantics semanticsOf(String domain, Semantics fallback) {
        DomainRules dr = planner.rules().domain(domain);
        Semantics own = dr == null ? null : dr.semantics();
        return own != null ? own : fallback;
    }

    /**
     * Check only, for any cost ({@code POST /v1/peek}): every limited descriptor is looked at with
     * {@link RateLimiter#peek(String, Limit, long)} for its {@code hits} (default 1, at least 1) and nothing is
     * consumed; the answer is what {@link #check} would answer for the same request, the statuses' numbers being the
     * state as it is. Fails like {@link #check}.
     */
    public CompletableFuture<CheckResult> peek(CheckRequest request) {
        return decided(request, Mode.PEEK, false, plan -> decide(plan, null));
    }

    /**
     * The one way every kind of request is decided: planned (bad input fails the future with its
     * {@link BadRequestException}, before the store is asked), then {@code decide}d.
     */
    private <T> CompletableFuture<T> decided(
            CheckRequest request, Mode mode, boolean envoyApi, Function<Plan, CompletableFuture<T>> decide) {
        try {
            return decide.apply(planner.plan(request, mode, envoyApi));
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** @param request the request decided, whose denials are noted; null for looks (nothing is denied) */
    private CompletableFuture<CheckResult> decide(Plan plan, @Nullable CheckRequest request) {
        return calls.run(PlanDecider.sequentialCalls(plan), () -> decider.decide(plan))
                .thenApply(r -> noted(request, plan, r));
    }

    /**
     * The dashboard's hook, the one place where both deciders' answers meet the store keys: each descriptor answered
     * over its limit, or blocked with hits ≥ 1, is counted in {@link #deniedKeys()}. A descriptor that passed costs a
     * comparison and allocates nothing; shadow-mode denials ({@code shadow_over_limit}) are answered OK and are not
     * counted, nor are check-only looks.
     */
    private CheckResult noted(@Nullable CheckRequest request, Plan plan, CheckResult result) {
        if (request == null) {
            return result;
        }
        List<Status> statuses = result.statuses();
        for (int i = 0; i < statuses.size(); i++) {
            Status s = statuses.get(i);
            if (s.outcome() == Outcome.OVER_LIMIT) {
                deniedKeys.record(plan.items().get(i).storeKey());
            } else if (s.outcome() == Outcome.BLOCKED && s.hits() > 0) {
                // answered without the store, so no store key was built: the entries as sent (one item per descriptor)
                deniedKeys.record(StoreKeys.storeKey(
                        request.domain(), request.descriptors().get(i).entries()));
            }
        }
        return result;
    }

    /**
     * Forgets the state of each descriptor's (key, limit): {@code POST /v1/reset}. Descriptors without a limit
     * (no rule, unlimited, blocked) are skipped; the others are reset at once.
     */
    public CompletableFuture<Void> reset(CheckRequest request) {
        return decided(
                request,
                Mode.RESET,
                false,
                plan -> calls.run(1, () -> {
                    List<CompletableFuture<Void>> resets = new ArrayList<>();
                    for (Item it : plan.items()) {
                        if (it.limit() != null) {
                            resets.add(limiter.resetAsync(it.storeKey(), it.storeLimit()));
                        }
                    }
                    return CompletableFuture.allOf(resets.toArray(CompletableFuture[]::new));
                }));
    }

    /**
     * Shaping ({@code POST /v1/reserve}): takes the descriptor's hits now, from the future if need be, when they
     * can be had within {@code maxWaitNanos}; the decision's {@code retryAfter} is how long to wait before acting.
     * One descriptor, token_bucket or gcra only (see {@link RateLimiter#reserve}).
     */
    public CompletableFuture<CheckResult> reserve(CheckRequest request, long maxWaitNanos) {
        if (request.descriptors() != null && request.descriptors().size() != 1) {
            return CompletableFuture.failedFuture(new BadRequestException(
                    "invalid-request",
                    "reserve takes exactly one descriptor, not "
                            + request.descriptors().size()));
        }
        return decided(request, Mode.DECIDE, false, plan -> {
            Item it = plan.items().get(0);
            if (it.kind() != Kind.ENFORCED && it.kind() != Kind.SHADOW) {
                throw new BadRequestException(
                        "invalid-request",
                        "reserve needs a descriptor with a limit and hits ≥ 1; this one matched "
                                + (it.rule() == null
                                        ? "no rule"
                                        : it.rule().kind().name().toLowerCase(Locale.ROOT) + " rule "
                                                + it.rule().id()));
            }
            try {
                // a window cannot lend from a future window: the request's mistake, refused before the store is asked
                Algorithms.checkReservable(it.storeLimit());
            } catch (UnsupportedOperationException e) {
                throw new BadRequestException("invalid-request", e.getMessage());
            }
            Duration maxWait = Duration.ofNanos(maxWaitNanos);
            return calls.run(1, () -> limiter.reserveAsync(it.storeKey(), it.storeLimit(), it.hits(), maxWait))
                    .thenApply(d -> {
                        Status st = PlanDecider.status(it, d, d.allowed() ? Outcome.OK : Outcome.OVER_LIMIT, true);
                        metrics.decision(plan.metricDomain(), it.metricRule(), st.outcome());
                        return noted(request, plan, new CheckResult(d.allowed(), List.of(st), d));
                    });
        });
    }
}
