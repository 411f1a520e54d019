package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.FailureKind;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.server.decision.CheckResult.Code;
import dev.sluice.server.decision.CheckResult.Outcome;
import dev.sluice.server.decision.CheckResult.Status;
import dev.sluice.server.decision.Plan.Item;
import dev.sluice.server.decision.Plan.Kind;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;

/**
 * Decides a {@link Plan} with the store, asynchronously, in two steps: the check-only looks (they decide whether the
 * enforced descriptors may be taken at all), all at once; then the enforced descriptors in one all-or-nothing call,
 * {@link RateLimiter#tryAcquireEachAsync}, which also tells each descriptor's own numbers, beside the shadow-mode
 * descriptors, each on its own. One path for one descriptor or many; a plan that needs no store completes at once.
 * {@link DecisionService}'s class comment is the full story.
 */
final class PlanDecider {
    private final RateLimiter limiter;
    private final String storeName;
    private final ServerMetrics metrics;
    private final StreamDoneDecider streamDone;

    PlanDecider(RateLimiter limiter, String storeName, ServerMetrics metrics) {
        this.limiter = limiter;
        this.storeName = storeName;
        this.metrics = metrics;
        this.streamDone = new StreamDoneDecider(limiter, this, metrics);
    }

    /** The most store calls one after another deciding a plan makes: the looks, then the takes. */
    static int sequentialCalls(Plan plan) {
        boolean looks = false;
        boolean takes = false;
        for (Item it : plan.items()) {
            looks |= it.kind() == Kind.PEEK || it.kind() == Kind.OVERSIZED;
            takes |= it.kind() == Kind.ENFORCED || it.kind() == Kind.SHADOW;
        }
        return (looks ? 1 : 0) + Math.max(takes ? 1 : 0, StreamDoneDecider.any(plan) ? StreamDoneDecider.MAX_CALLS : 0);
    }

    CompletableFuture<CheckResult> decide(Plan plan) {
        List<Item> items = plan.items();
        Status[] out = new Status[items.size()];
        List<CompletableFuture<?>> looks = new ArrayList<>();
        // 1. what needs no store, and the check-only looks: they decide whether the enforced ones may be taken
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            int at = i;
            switch (it.kind()) {
                case NONE ->
                    out[i] = new Status(Code.OK, Outcome.NO_RULE, null, null, null, it.hits(), it.metricRule(), true);
                case UNLIMITED ->
                    out[i] = new Status(
                            Code.OK, Outcome.UNLIMITED, it.rule(), null, null, it.hits(), it.metricRule(), true);
                case BLOCKED -> {
                    long w = it.matched().windowNanos();
                    out[i] = over(it, Outcome.BLOCKED, null, new Decision(false, 0, 0, w, w));
                }
                case PEEK ->
                    looks.add(look(it, it.peekCost()).thenAccept(d -> {
                        boolean ok = d.allowed() || it.matched().shadowMode();
                        out[at] = new Status(
                                ok ? Code.OK : Code.OVER_LIMIT,
                                Outcome.CHECKED,
                                it.rule(),
                                it.limit(),
                                d,
                                it.hits(),
                                it.metricRule(),
                                true);
                    }));
                // more hits than the limit holds (strict semantics on the Envoy APIs): over, nothing taken
                case OVERSIZED ->
                    looks.add(oversized(it).thenAccept(d -> out[at] = over(it, Outcome.OVER_LIMIT, it.limit(), d)));
                case ENFORCED, SHADOW, CHARGE, RESERVE -> {
                    // below
                }
                default -> throw new IllegalStateException("unknown kind " + it.kind());
            }
        }
        if (looks.isEmpty()) {
            return take(plan, out);
        }
        return CompletableFuture.allOf(looks.toArray(CompletableFuture[]::new)).thenCompose(v -> take(plan, out));
    }

    /** A descriptor denied without a take: over, or answered OK in shadow mode. */
    private static Status over(Item it, Outcome outcome, @Nullable Limit limit, Decision d) {
        boolean shadow = it.matched().shadowMode();
        return new Status(
                shadow ? Code.OK : Code.OVER_LIMIT,
                shadow ? Outcome.SHADOW_OVER_LIMIT : outcome,
                it.rule(),
                limit,
                d,
                it.hits(),
                it.metricRule(),
                true);
    }

    /**
     * 2. The enforced descriptors, all or nothing in one store call, not even tried when the request is already
     * denied; beside them the shadow-mode descriptors, each on its own (they count every request and never deny).
     */
    private CompletableFuture<CheckResult> take(Plan plan, Status[] out) {
        List<Item> items = plan.items();
        boolean allowed = true;
        for (Status s : out) {
            allowed &= s == null || s.code() == Code.OK;
        }
        List<Integer> enforced = new ArrayList<>(items.size());
        List<Permit> permits = new ArrayList<>(items.size());
        List<CompletableFuture<?>> calls = new ArrayList<>(0); // the shadow-mode descriptors' calls, if any
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            int at = i;
            if (it.kind() == Kind.ENFORCED) {
                if (allowed) {
                    enforced.add(i);
                    permits.add(new Permit(it.storeKey(), it.storeLimit(), it.hits()));
                } else {
                    out[i] = new Status(
                            Code.OK, Outcome.SKIPPED, it.rule(), it.limit(), null, it.hits(), it.metricRule(), true);
                }
            } else if (it.kind() == Kind.CHARGE || it.kind() == Kind.RESERVE) {
                // a cost known when the work ends: decided on its own, whatever the others (StreamDoneDecider)
                calls.add(streamDone.decide(plan, it).thenAccept(d -> out[at] = streamed(it, d)));
            } else if (it.kind() == Kind.SHADOW) {
                calls.add(limiter.tryAcquireAsync(it.storeKey(), it.storeLimit(), it.hits())
                        .thenAccept(d -> out[at] = new Status(
                                Code.OK,
                                d.allowed() ? Outcome.OK : Outcome.SHADOW_OVER_LIMIT,
                                it.rule(),
                                it.limit(),
                                d,
                                it.hits(),
                                it.metricRule(),
                                true)));
            }
        }
        CompletableFuture<@Nullable Decision> atomic = permits.isEmpty()
                ? CompletableFuture.completedFuture(null)
                : limiter.tryAcquireEachAsync(permits).thenApply(each -> taken(items, enforced, each, out));
        if (calls.isEmpty()) {
            return atomic.thenApply(d -> answer(plan, out, d, enforced));
        }
        calls.add(atomic);
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
                .thenApply(v -> answer(plan, out, atomic.join(), enforced));
    }

    /**
     * The enforced descriptors' statuses from the store's one answer: each descriptor OVER_LIMIT exactly when its own
     * hits do not fit, with its own numbers. Should the request be denied with every descriptor fitting on its own
     * (two descriptors of one key and limit), the denial is reported on the tightest one with the overall numbers.
     */
    private static Decision taken(List<Item> items, List<Integer> enforced, PermitDecisions each, Status[] out) {
        Decision overall = each.decision();
        if (each.combinedOnly()) { // a store that could tell only the overall decision: it stands for each
            for (int i : enforced) {
                out[i] = status(items.get(i), overall, overall.allowed() ? Outcome.OK : Outcome.OVER_LIMIT, false);
            }
            return overall;
        }
        int tight = -1;
        boolean named = false;
        for (int k = 0; k < enforced.size(); k++) {
            int i = enforced.get(k);
            Decision d = each.permits().get(k);
            boolean over = !overall.allowed() && d.denied();
            named |= over;
            out[i] = status(items.get(i), d, over ? Outcome.OVER_LIMIT : Outcome.OK, true);
            if (tight < 0 || d.remaining() < each.permits().get(tight).remaining()) {
                tight = k;
            }
        }
        if (!overall.allowed() && !named) {
            out[enforced.get(tight)] = status(items.get(enforced.get(tight)), overall, Outcome.OVER_LIMIT, false);
        }
        return overall;
    }

    /**
     * The answer: every status counted in the metrics, and its decision the all-or-nothing one with whatever else
     * counts (check-only looks, blocked rules), not a fold of the enforced descriptors' own.
     */
    private CheckResult answer(Plan plan, Status[] out, @Nullable Decision atomic, List<Integer> enforced) {
        boolean allowed = true;
        Decision combined = atomic;
        for (int i = 0; i < out.length; i++) {
            Status s = out[i];
            metrics.decision(plan.metricDomain(), s.metricRule(), s.outcome());
            allowed &= s.code() == Code.OK;
            Decision sd = s.decision();
            boolean counts = sd != null
                    && s.outcome() != Outcome.SHADOW_OVER_LIMIT
                    && !(s.rule() != null && s.rule().shadowMode())
                    && !enforced.contains(i);
            if (sd != null && counts) {
                combined = combined == null ? sd : combined.mostRestrictive(sd);
            }
        }
        return new CheckResult(allowed, List.of(out), combined);
    }

    /** The numbers of a descriptor asking more than its limit holds: denied, its state read with a peek when possible. */
    private CompletableFuture<Decision> oversized(Item it) {
        long w = it.storeLimit().periodNanos();
        CompletableFuture<Decision> now;
        try {
            now = limiter.peekAsync(it.storeKey(), it.storeLimit(), 1);
        } catch (UnsupportedOperationException e) {
            now = CompletableFuture.failedFuture(e);
        }
        return now.handle((d, t) -> {
            if (t == null) {
                long reset = d.resetAfterNanos();
                return new Decision(false, d.limit(), d.remaining(), Math.max(reset, w), reset, d.degradation());
            }
            if (FailureKind.unwrap(t) instanceof UnsupportedOperationException) {
                return new Decision(false, it.storeLimit().capacity(), 0, w, w);
            }
            throw new CompletionException(t);
        });
    }

    /** A check-only look at one descriptor; a store without peek is a 501 / UNIMPLEMENTED, not a bad request. */
    CompletableFuture<Decision> look(Item it, long cost) {
        CompletableFuture<Decision> f;
        try {
            f = limiter.peekAsync(it.storeKey(), it.storeLimit(), cost);
        } catch (UnsupportedOperationException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.exceptionallyCompose(t -> {
            Throwable c = FailureKind.unwrap(t);
            if (!(c instanceof UnsupportedOperationException e)) {
                return CompletableFuture.failedFuture(c);
            }
            return CompletableFuture.failedFuture(new ServiceException(
                    FailureKind.UNSUPPORTED,
                    "peek-unsupported",
                    "the " + storeName + " store cannot answer "
                            + "check-only requests (hits 0, /v1/peek): it does not implement peek"
                            + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")")
                            + "; send hits ≥ 1 to /v1/check",
                    e));
        });
    }

    /** A stream-done descriptor's status: a check when it looked ({@code hits: 0}), else OK or over. */
    private static Status streamed(Item it, Decision d) {
        Outcome outcome = d.denied()
                ? (it.matched().shadowMode() ? Outcome.SHADOW_OVER_LIMIT : Outcome.OVER_LIMIT)
                : it.hits() == 0 ? Outcome.CHECKED : Outcome.OK;
        return status(it, d, outcome, true);
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
