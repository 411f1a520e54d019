package dev.sluice.server.decision;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.server.config.Rule;
import dev.sluice.server.config.StreamDone;
import dev.sluice.server.decision.CheckResult.Outcome;
import dev.sluice.server.decision.CheckResult.Status;
import dev.sluice.server.decision.Plan.Item;
import dev.sluice.server.decision.Plan.Mode;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * A cost known only afterwards, on Sluice's own API: {@code POST /v1/check} with a {@code reservation} reserves the
 * descriptor's hits as the estimate ({@link RateLimiter#tryAcquireEstimate}), {@code POST /v1/settle} settles it at
 * the actual cost ({@link RateLimiter#settle}). Envoy's flow, where the reservation id travels in a descriptor entry,
 * is {@link StreamDoneDecider}'s.
 *
 * <p><b>One descriptor.</b> A reservation is on one key and limit: a store reserves and settles one key at a time,
 * so several descriptors could be neither reserved all-or-nothing (a denied second one would leave the first
 * taken) nor given back exactly (a settle gives back only what the state can still take back). A reservation
 * request with more than one descriptor is refused (400 {@code invalid-reservation}): send one per descriptor, each
 * with an id of its own. Its descriptor must be limited (a rule or a caller-sent limit) with hits ≥ 1, the estimate,
 * and its rule must not settle by an entry of its own ({@code reservation:} or {@code charge_on_stream_done}).
 */
public final class Settlements {
    private final RateLimiter limiter;
    private final RequestPlanner planner;
    private final StoreCalls calls;
    private final ServerMetrics metrics;

    Settlements(RateLimiter limiter, RequestPlanner planner, StoreCalls calls, ServerMetrics metrics) {
        this.limiter = limiter;
        this.planner = planner;
        this.calls = calls;
        this.metrics = metrics;
    }

    /** What {@link #settle} did, with the descriptor's rule and limit for the answer. */
    public record Settled(Settlement settlement, Rule rule, Limit limit) {}

    /**
     * Reserves the descriptor's hits under {@code id} until settled or {@code settleWithin} has passed: the decision
     * is {@code tryAcquire}'s (denied: nothing taken, nothing pending). An id already pending on the key and limit is
     * a {@link BadRequestException} from the store, nothing taken. Fails like {@link DecisionService#check}.
     */
    public CompletableFuture<CheckResult> reserve(CheckRequest request, String id, Duration settleWithin) {
        try {
            checkReservation(request, id);
            Settlement.checkWithin("reservation.settle_within", settleWithin);
            Plan plan = planner.plan(request, Mode.DECIDE, false);
            Item it = one(plan, "reserve");
            if (it.hits() < 1) {
                throw new BadRequestException(
                        "invalid-reservation",
                        "descriptors[0]: hits " + it.hits()
                                + " reserves nothing: the hits are the estimate (1 or more)");
            }
            return calls.run(
                            1,
                            () -> limiter.tryAcquireEstimateAsync(
                                    it.storeKey(), it.storeLimit(), it.hits(), id, settleWithin))
                    .thenApply(d -> {
                        Status st = PlanDecider.status(it, d, d.allowed() ? Outcome.OK : Outcome.OVER_LIMIT, true);
                        metrics.decision(plan.metricDomain(), it.metricRule(), st.outcome());
                        metrics.steps().estimated(plan.metricDomain(), it.metricRule(), d);
                        return new CheckResult(d.allowed(), List.of(st), d);
                    });
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(new BadRequestException("invalid-reservation", e.getMessage()));
        }
    }

    /**
     * Settles reservation {@code id} of the descriptor at {@code actual} (0 to the limit's capacity); a reservation
     * not pending (never made, denied, settled, or past its {@code settle_within}) changes nothing and answers
     * {@link Settlement#NOT_PENDING}. A settle the store cannot make is not retried: a failure policy answers it
     * {@link Settlement#NOT_PENDING} (the estimate stands) and counts it degraded; a store without one fails it (503).
     * Either way it is safe to retry. Counted in {@link StepMetrics} by what it did.
     */
    public CompletableFuture<Settled> settle(CheckRequest request, String id, long actual) {
        try {
            checkReservation(request, id);
            Plan plan = planner.plan(request, Mode.RESET, false);
            Item it = one(plan, "settle");
            try {
                Settlement.checkActual(it.storeLimit(), actual);
            } catch (IllegalArgumentException e) {
                throw new BadRequestException("invalid-reservation", "actual: " + e.getMessage());
            }
            return calls.run(1, () -> limiter.settleAsync(it.storeKey(), it.storeLimit(), id, actual))
                    .thenApply(s -> {
                        metrics.steps().settled(plan.metricDomain(), it.metricRule(), s);
                        return new Settled(s, it.matched(), it.storeLimit());
                    });
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static void checkReservation(CheckRequest request, String id) {
        try {
            Settlement.checkId("reservation", id);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("invalid-reservation", "reservation.id: " + e.getMessage());
        }
        if (request.descriptors() != null && request.descriptors().size() != 1) {
            throw new BadRequestException(
                    "invalid-reservation",
                    "a reservation is on one descriptor, not "
                            + request.descriptors().size()
                            + ": a store reserves and settles one key at a time, so several could be neither taken"
                            + " all-or-nothing nor given back exactly; send one request per descriptor, each with"
                            + " an id of its own");
        }
    }

    /** The plan's one descriptor, which must have a limit the store keeps. */
    private static Item one(Plan plan, String what) {
        Item it = plan.items().get(0);
        Rule r = it.rule();
        if (it.limit() == null || r == null) {
            throw new BadRequestException(
                    "invalid-reservation",
                    what + " needs a descriptor with a limit; this one matched "
                            + (r == null ? "no rule" : r.kind().name().toLowerCase(Locale.ROOT) + " rule " + r.id()));
        }
        StreamDone sd = r.streamDone();
        if (sd != null) {
            throw new BadRequestException(
                    "invalid-reservation",
                    "rule " + r.id() + " settles by itself ("
                            + (sd.charges() ? "charge_on_stream_done" : "reservation: {id_key: " + sd.idKey() + "}")
                            + ", Envoy's stream-done flow): send its descriptor without 'reservation'");
        }
        return it;
    }
}
