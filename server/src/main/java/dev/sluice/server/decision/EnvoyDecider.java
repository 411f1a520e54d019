package dev.sluice.server.decision;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.server.config.Rule;
import dev.sluice.server.decision.CheckResult.Code;
import dev.sluice.server.decision.CheckResult.Outcome;
import dev.sluice.server.decision.CheckResult.Status;
import dev.sluice.server.decision.Plan.Item;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Decides a {@link Plan.Mode#ENVOY} plan as envoyproxy/ratelimit does by default: each descriptor on its own (one
 * over its limit does not stop the others from being counted), every hit counted, denied ones too.
 *
 * <p>Per limited descriptor, with {@code C} its limit and {@code h} its hits (envoy's {@code hits_addend}):
 * <ul>
 *   <li>{@code h ≥ 1}: the hits are added; OK while the window's count stays within {@code C}, with
 *       {@code C − count} remaining; OVER_LIMIT (remaining 0) once it goes beyond, which leaves the window over
 *       until it ends (the counter: {@link RequestPlanner#counting}); {@code h > C} is simply over;</li>
 *   <li>{@code h = 0} (check only): nothing added; OVER_LIMIT only when the count is already beyond {@code C}, so OK
 *       at exactly the limit, as envoy compares {@code count + 0 > C};</li>
 *   <li>{@code shadow_mode}: counted the same, answered OK (remaining 0 when over); {@code requests_per_unit: 0}:
 *       every hit over, a check OK; {@code quota_mode}: the request is over only when every quota descriptor is
 *       over, or another descriptor is. envoy's global {@code QUOTA_MODE} ({@code sluice serve --quota-mode}) makes
 *       every descriptor a quota descriptor, as envoy's {@code isQuotaMode := globalQuotaMode || rule's}: those no
 *       rule matched (or replaced) count as quota descriptors within their limit, unlimited ones not at all.</li>
 * </ul>
 * Token bucket, GCRA and the sliding algorithms (Sluice's additions) count a denied call by draining what is left.
 * When the failure policy decides instead of the store, its decision is read the same way and stays marked
 * degraded ({@code fallback_local} keeps the same counters in memory, so it limits as the store would).
 *
 * <p>Each descriptor counted here is also counted in envoy's stats ({@link dev.sluice.server.stats.EnvoyStats}),
 * from the window's count before and after its hits, as envoy's limiter counts them.
 */
final class EnvoyDecider {
    private final RateLimiter limiter;
    private final ServerMetrics metrics;
    private final PlanDecider peeker;
    private final StreamDoneDecider streamDone;

    EnvoyDecider(RateLimiter limiter, ServerMetrics metrics, PlanDecider peeker) {
        this.limiter = limiter;
        this.metrics = metrics;
        this.peeker = peeker;
        this.streamDone = new StreamDoneDecider(limiter, peeker, metrics);
    }

    /**
     * The most store calls one after another a plan makes here: the descriptors are counted at once, each with one
     * call, and for Sluice's other algorithms a second (draining a denial).
     */
    static int sequentialCalls(Plan plan) {
        if (StreamDoneDecider.any(plan)) {
            return StreamDoneDecider.MAX_CALLS;
        }
        for (Item it : plan.items()) {
            if (it.kind() == Plan.Kind.ENFORCED || it.kind() == Plan.Kind.SHADOW) {
                return 2;
            }
        }
        return 0;
    }

    /**
     * Counts every limited descriptor at once, asynchronously; the answer once every count is in.
     *
     * @param quotaMode envoy's global {@code QUOTA_MODE}: every descriptor is a quota descriptor
     */
    CompletableFuture<CheckResult> decide(Plan plan, boolean quotaMode) {
        List<Item> items = plan.items();
        List<CompletableFuture<Decision>> counts = new ArrayList<>(items.size());
        for (Item it : items) {
            counts.add(
                    it.kind() == Plan.Kind.ENFORCED || it.kind() == Plan.Kind.SHADOW
                            ? count(it)
                            : it.kind() == Plan.Kind.CHARGE || it.kind() == Plan.Kind.RESERVE
                                    ? streamDone.decide(plan, it)
                                    : CompletableFuture.completedFuture(null));
        }
        return CompletableFuture.allOf(counts.toArray(CompletableFuture[]::new))
                .thenApply(v -> answer(plan, counts, quotaMode));
    }

    private CheckResult answer(Plan plan, List<CompletableFuture<Decision>> counts, boolean quotaMode) {
        List<Item> items = plan.items();
        Status[] out = new Status[items.size()];
        int over = 0;
        int quota = 0;
        int quotaOver = 0;
        Decision combined = null;
        for (int i = 0; i < items.size(); i++) {
            Item it = items.get(i);
            Rule rule = it.rule();
            Decision d = switch (it.kind()) {
                case NONE, UNLIMITED -> null;
                case BLOCKED -> {
                    // requests_per_unit: 0, as envoy counts it: every hit over a limit of 0
                    metrics.envoyStats()
                            .counted(it.metricRule(), it.matched().shadowMode(), 0, it.hits(), 0, it.hits());
                    long w = it.matched().windowNanos();
                    yield new Decision(it.hits() == 0, 0, 0, it.hits() == 0 ? 0 : w, w);
                }
                case ENFORCED, SHADOW, CHARGE, RESERVE -> counts.get(i).join();
                default -> throw new IllegalStateException("not an envoy plan item: " + it.kind());
            };
            Status s;
            if (d == null) {
                s = new Status(
                        Code.OK,
                        it.kind() == Plan.Kind.NONE ? Outcome.NO_RULE : Outcome.UNLIMITED,
                        rule,
                        null,
                        null,
                        it.hits(),
                        it.metricRule(),
                        true);
                // envoy counts a descriptor no rule matched as a quota descriptor in global quota mode (it is OK)
                quota += quotaMode && it.kind() == Plan.Kind.NONE ? 1 : 0;
            } else {
                Rule matched = it.matched(); // a decision was made: the item has a rule
                boolean denied = d.denied();
                boolean shadow = matched.shadowMode();
                Outcome outcome = !denied
                        ? (it.hits() == 0 ? Outcome.CHECKED : Outcome.OK)
                        : shadow
                                ? Outcome.SHADOW_OVER_LIMIT
                                : it.kind() == Plan.Kind.BLOCKED ? Outcome.BLOCKED : Outcome.OVER_LIMIT;
                // the rule's limit, not its counting form: that is what callers are told
                s = new Status(
                        denied && !shadow ? Code.OVER_LIMIT : Code.OK,
                        outcome,
                        matched,
                        matched.limit(),
                        d,
                        it.hits(),
                        it.metricRule(),
                        true);
                if (quotaMode || matched.quotaMode()) {
                    quota++;
                    quotaOver += s.code() == Code.OVER_LIMIT ? 1 : 0;
                } else if (s.code() == Code.OVER_LIMIT) {
                    over++;
                }
                if (!shadow) {
                    combined = combined == null ? d : combined.mostRestrictive(d);
                }
            }
            out[i] = s;
            metrics.decision(plan.metricDomain(), s.metricRule(), s.outcome());
        }
        boolean allowed = over == 0 && (quota == 0 || quotaOver < quota);
        return new CheckResult(allowed, List.of(out), combined);
    }

    /** Whether {@code l} is envoy's counter ({@link RequestPlanner#counting}) rather than one of Sluice's algorithms. */
    static boolean counter(Limit l) {
        return l.capacity() == Limit.MAX_WINDOW_PERMITS && l.algorithm() == Algorithm.FIXED_WINDOW;
    }

    /** One descriptor, counted; the decision carries envoy's numbers (limit {@code C}, remaining {@code C − count}). */
    private CompletableFuture<Decision> count(Item it) {
        Limit l = it.storeLimit();
        long h = it.hits();
        if (h == 0) {
            // check only: Sluice's algorithms answer the look itself, envoy's counter reads it as a count
            return counter(l) ? peeker.look(it, 1).thenApply(d -> counted(it, d)) : peeker.look(it, 1);
        }
        CompletableFuture<Decision> d = limiter.tryAcquireAsync(it.storeKey(), l, Math.min(h, l.capacity()));
        if (!counter(l)) {
            // token bucket, GCRA, sliding windows: a denied call is counted by draining what is left
            d = d.thenCompose(first -> drains(first)
                    ? limiter.tryAcquireAsync(it.storeKey(), l, first.remaining())
                            .thenApply(ignored -> first)
                    : CompletableFuture.completedFuture(first));
        }
        return d.thenApply(first -> counted(it, first));
    }

    /** What the store answered for one descriptor's hits (its drain made, if one was due), read as envoy counts. */
    private Decision counted(Item it, Decision d) {
        Limit l = it.storeLimit();
        long h = it.hits();
        if (!counter(l)) {
            // envoy's stats read the count as what the limit holds less what remains, before the hits if denied
            long c = l.capacity();
            long before = d.allowed() ? c - d.remaining() - h : c - d.remaining();
            metrics.envoyStats().counted(it.metricRule(), it.matched().shadowMode(), c, h, before, before + h);
            return d.degraded() ? d : h > c || !d.allowed() ? over(d, c) : d;
        }
        // envoy's counter (RequestPlanner#counting): add the hits, then compare the count with the limit
        // a failure policy's answer reads the same way: fail_open as a fresh counter, fail_closed as one over,
        // fallback_local as the local counter it keeps with the same limit (and stays marked degraded)
        long c = it.matched().limitOfLimited().capacity();
        long count = h > 0 && !d.allowed() ? Long.MAX_VALUE : l.capacity() - d.remaining();
        // envoy's stats, as its limiter counts them (EnvoyStats): the hits took the count from count - h to count
        metrics.envoyStats().counted(it.metricRule(), it.matched().shadowMode(), c, h, count - h, count);
        if (count > c) {
            return over(d, c);
        }
        return new Decision(true, c, c - count, 0, d.resetAfterNanos(), d.degradation());
    }

    /** A denial by the store (not by a failure policy) with permits left: they are drained, so the hits count. */
    private static boolean drains(Decision d) {
        return !d.degraded() && !d.allowed() && d.remaining() > 0;
    }

    private static Decision over(Decision d, long c) {
        long reset = d.resetAfterNanos();
        return new Decision(false, c, 0, Math.max(d.retryAfterNanos(), reset), reset, d.degradation());
    }
}
