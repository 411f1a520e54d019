package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.FailureKind;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.LogThrottle;
import dev.sluice.server.decision.CheckResult.Code;
import dev.sluice.server.decision.CheckResult.Outcome;
import dev.sluice.server.decision.CheckResult.Status;
import dev.sluice.server.decision.Plan.Item;
import dev.sluice.server.decision.Plan.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * Decides a {@link Plan} with the store, in three phases: what needs no store and the check-only looks (they decide
 * whether the enforced descriptors may be taken at all); the enforced descriptors in one all-or-nothing call; the
 * shadow-mode descriptors, each on its own. {@link DecisionService}'s class comment is the full story.
 */
final class PlanDecider {
    private final RateLimiter limiter;
    private final String storeName;
    private final ServerMetrics metrics;
    private final LogThrottle logThrottle;

    PlanDecider(RateLimiter limiter, String storeName, ServerMetrics metrics, LogThrottle logThrottle) {
        this.limiter = limiter;
        this.storeName = storeName;
        this.metrics = metrics;
        this.logThrottle = logThrottle;
    }

    CheckResult decide(Plan plan) {
        return decide(plan, null);
    }

    /**
     * A plan whose only store call is one enforced descriptor ({@link Plan#loneEnforced}): that call made with
     * {@link RateLimiter#tryAcquireAsync}, so no thread waits for a remote store; the answer is built as
     * {@link #decide(Plan)} builds it.
     */
    CompletableFuture<CheckResult> decideLoneAsync(Plan plan, int index) {
        Item it = plan.items().get(index);
        return limiter.tryAcquireAsync(it.storeKey(), it.storeLimit(), it.hits())
                .thenApply(d -> decide(plan, d));
    }

    /** @param lone the decision of the plan's lone enforced descriptor, already made, or null to make it here */
    private CheckResult decide(Plan plan, @Nullable Decision lone) {
        List<Item> items = plan.items();
        Status[] out = new Status[items.size()];
        boolean allowed = true;
        List<Integer> enforced = new ArrayList<>(items.size());
        Decision atomic = null;
        // 1. what needs no store, and the check-only looks: they decide whether the enforced ones may be taken
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            switch (it.kind()) {
                case NONE ->
                    out[i] = new Status(Code.OK, Outcome.NO_RULE, null, null, null, it.hits(), it.metricRule(), true);
                case UNLIMITED ->
                    out[i] = new Status(
                            Code.OK, Outcome.UNLIMITED, it.rule(), null, null, it.hits(), it.metricRule(), true);
                case BLOCKED -> {
                    long w = it.matched().windowNanos();
                    Decision d = new Decision(false, 0, 0, w, w);
                    boolean shadow = it.matched().shadowMode();
                    out[i] = new Status(
                            shadow ? Code.OK : Code.OVER_LIMIT,
                            shadow ? Outcome.SHADOW_OVER_LIMIT : Outcome.BLOCKED,
                            it.rule(),
                            null,
                            d,
                            it.hits(),
                            it.metricRule(),
                            true);
                    allowed &= shadow;
                }
                case PEEK -> {
                    Decision d = peek(it, it.peekCost());
                    boolean shadow = it.matched().shadowMode();
                    Code code = d.allowed() || shadow ? Code.OK : Code.OVER_LIMIT;
                    out[i] = new Status(
                            code, Outcome.CHECKED, it.rule(), it.limit(), d, it.hits(), it.metricRule(), true);
                    allowed &= code == Code.OK;
                }
                case OVERSIZED -> {
                    // more hits than the limit holds (strict semantics on the Envoy APIs): over, nothing taken
                    Decision d = oversized(it);
                    boolean shadow = it.matched().shadowMode();
                    out[i] = new Status(
                            shadow ? Code.OK : Code.OVER_LIMIT,
                            shadow ? Outcome.SHADOW_OVER_LIMIT : Outcome.OVER_LIMIT,
                            it.rule(),
                            it.limit(),
                            d,
                            it.hits(),
                            it.metricRule(),
                            true);
                    allowed &= shadow;
                }
                case ENFORCED -> enforced.add(i);
                case SHADOW -> {
                    // below
                }
                default -> throw new IllegalStateException("unknown kind " + it.kind());
            }
        }
        // 2. the enforced descriptors, all or nothing; not even tried when the request is already denied
        if (!allowed) {
            for (int i : enforced) {
                Item it = items.get(i);
                out[i] = new Status(
                        Code.OK, Outcome.SKIPPED, it.rule(), it.limit(), null, it.hits(), it.metricRule(), true);
            }
        } else if (enforced.size() == 1) {
            int i = enforced.get(0);
            Item it = items.get(i);
            Decision d = lone != null ? lone : limiter.tryAcquire(it.storeKey(), it.storeLimit(), it.hits());
            out[i] = status(it, d, d.allowed() ? Outcome.OK : Outcome.OVER_LIMIT, true);
            allowed = d.allowed();
        } else if (enforced.size() > 1) {
            atomic = acquireAll(items, enforced, out);
            allowed = atomic.allowed();
        }
        // 3. shadow-mode descriptors, each on its own: they count every request and never deny
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            if (it.kind() == Kind.SHADOW) {
                Decision d = limiter.tryAcquire(it.storeKey(), it.storeLimit(), it.hits());
                out[i] = new Status(
                        Code.OK,
                        d.allowed() ? Outcome.OK : Outcome.SHADOW_OVER_LIMIT,
                        it.rule(),
                        it.limit(),
                        d,
                        it.hits(),
                        it.metricRule(),
                        true);
            }
        }
        // the answer's decision: the all-or-nothing one (not a fold of the per-descriptor looks taken after it),
        // with whatever else counts (check-only looks, blocked rules)
        Decision combined = atomic;
        for (int i = 0; i < out.length; i++) {
            Status s = out[i];
            metrics.decision(plan.metricDomain(), s.metricRule(), s.outcome());
            Decision sd = s.decision();
            boolean counts = sd != null
                    && s.outcome() != Outcome.SHADOW_OVER_LIMIT
                    && !(s.rule() != null && s.rule().shadowMode())
                    && !(atomic != null && enforced.contains(i));
            if (sd != null && counts) {
                combined = combined == null ? sd : combined.mostRestrictive(sd);
            }
        }
        return new CheckResult(allowed, List.of(out), combined);
    }

    /** Several enforced descriptors in one all-or-nothing store call; fills their statuses, returns the decision. */
    private Decision acquireAll(List<Item> items, List<Integer> enforced, Status[] out) {
        List<Permit> permits = new ArrayList<>(enforced.size());
        for (int i : enforced) {
            Item it = items.get(i);
            permits.add(new Permit(it.storeKey(), it.storeLimit(), it.hits()));
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
            Decision shown = allowed ? new Decision(true, now.limit(), now.remaining(), 0, now.resetAfterNanos()) : now;
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
                if (remaining(out[i]) < remaining(out[tight])) {
                    tight = i;
                }
            }
            out[tight] = status(items.get(tight), combined, Outcome.OVER_LIMIT, false);
        }
        return combined;
    }

    /** The numbers of a descriptor asking more than its limit holds: denied, its state read with a peek when possible. */
    private Decision oversized(Item it) {
        long w = it.storeLimit().periodNanos();
        try {
            Decision now = limiter.peek(it.storeKey(), it.storeLimit(), 1);
            long reset = now.resetAfterNanos();
            return new Decision(false, now.limit(), now.remaining(), Math.max(reset, w), reset, now.degradation());
        } catch (UnsupportedOperationException e) {
            return new Decision(false, it.storeLimit().capacity(), 0, w, w);
        }
    }

    /** A check-only look at one descriptor; a store without peek is a 501 / UNIMPLEMENTED, not a bad request. */
    Decision peek(Item it, long cost) {
        try {
            return limiter.peek(it.storeKey(), it.storeLimit(), cost);
        } catch (UnsupportedOperationException e) {
            throw new ServiceException(
                    FailureKind.UNSUPPORTED,
                    "peek-unsupported",
                    "the " + storeName + " store cannot answer "
                            + "check-only requests (hits 0, /v1/peek): it does not implement peek"
                            + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")")
                            + "; send hits ≥ 1 to /v1/check",
                    e);
        }
    }

    /**
     * Per-descriptor detail after a multi-descriptor decision, or null when the store cannot give it: the decision
     * is already made (and its permits possibly taken), so a failing look must not fail the request.
     */
    private @Nullable Decision detail(Item it) {
        try {
            return limiter.peek(it.storeKey(), it.storeLimit(), it.hits());
        } catch (UnsupportedOperationException e) {
            return null;
        } catch (RuntimeException e) {
            metrics.storeError("detail");
            if (logThrottle.allow("detail")) {
                LoggerFactory.getLogger(DecisionService.class)
                        .atWarn()
                        .addKeyValue("event", "detail_unavailable")
                        .addKeyValue("store", storeName)
                        .addKeyValue("cause", e)
                        .addKeyValue("suppressed_since_last", logThrottle.suppressedSinceLast())
                        .log();
            }
            return null;
        }
    }

    /** What a detailed status's own decision leaves. */
    private static long remaining(Status s) {
        return Objects.requireNonNull(s.decision(), "a detailed status has its decision")
                .remaining();
    }

    static Status status(Item it, Decision d, Outcome outcome, boolean detailed) {
        return new Status(
                outcome == Outcome.OVER_LIMIT ? Code.OVER_LIMIT : Code.OK,
                outcome,
                it.rule(),
                it.limit(),
                d,
                it.hits(),
                it.metricRule(),
                detailed);
    }
}
