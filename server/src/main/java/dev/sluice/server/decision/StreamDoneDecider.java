package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.FailureKind;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.server.decision.Plan.Item;
import dev.sluice.server.decision.Plan.Kind;
import dev.sluice.server.decision.Plan.Reservation;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Decides the descriptors of a cost known only when the work ends ({@link dev.sluice.server.config.StreamDone}), in
 * either semantics, each on its own (never all-or-nothing with the request's other descriptors): envoy's
 * {@code apply_on_stream_done} flow, where Envoy sends the descriptor at the request's start with
 * {@code hits_addend: 0} (a check) or with the estimate, and again when the stream ends with {@code hits_addend} =
 * the actual cost, whose answer it ignores.
 *
 * <h2>{@link Kind#CHARGE}: {@code charge_on_stream_done}, hits ≥ 1</h2>
 * Work already done is counted in full, whatever the key's state, and answered OK with what remains (0 in debt):
 * <ul>
 *   <li>token bucket, GCRA: {@link RateLimiter#reserve} of the hits with no bound on the wait, which takes them now
 *       from the future: the bucket goes into debt, which the key's next requests wait out, exactly as a
 *       {@link RateLimiter#settle} that charges more;</li>
 *   <li>fixed window, envoy semantics: envoy's counter ({@link RequestPlanner#counting}), which adds every hit;</li>
 *   <li>fixed window, strict semantics: the hits are taken if they fit, else what is left of the window (up to
 *       {@value #MAX_CALLS} tries when others take at the same time). A fixed window's count at or past its limit
 *       denies everything until the window ends and nothing of it carries over, so a full window decides every later
 *       request as one charged past its limit would;</li>
 *   <li>sliding window and sliding log, whose counts past the limit would matter as they slide: refused in the rules
 *       (use a reservation).</li>
 * </ul>
 * More hits than the limit's capacity count as the capacity, as {@link Settlement#checkActual} bounds a settle.
 *
 * <h2>{@link Kind#RESERVE}: {@code reservation:}, a descriptor carrying a request id</h2>
 * Decided on the rule's own limit (admitted or denied on the estimate, in both semantics; a denial takes nothing):
 * <ul>
 *   <li>hits from 1 to the capacity: {@link RateLimiter#tryAcquireEstimate} of the hits under the id, the
 *       request's start; when the id is already pending (the store refuses a second reservation under it), this is
 *       the stream's end: {@link RateLimiter#settle} at the hits;</li>
 *   <li>hits 0: a settle at 0 (the work used nothing) when the id is pending, else a check: would 1 more pass?;</li>
 *   <li>more hits than the capacity: a settle at the capacity when the id is pending, else OVER_LIMIT (it can never
 *       be granted), nothing taken.</li>
 * </ul>
 * A settled descriptor is answered OK, with the remaining the settle left. A stream end later than the rule's
 * {@code settle_within} finds its reservation gone (its estimate stood) and is taken for a new request's start.
 *
 * <h2>Counted</h2>
 * Each reservation's estimate in {@code sluice_reservations_total}, each settle in {@code sluice_settles_total}
 * ({@link StepMetrics}). On the Envoy APIs each descriptor with hits ≥ 1 also counts in envoy's stats as envoy's
 * service counts every call's {@code hits_addend} ({@link EnvoyStreamDoneStats}): all the hits in
 * {@code total_hits}, then within, near or over the limit by the count before and after them.
 */
final class StreamDoneDecider {
    /** The most store calls one after another a stream-done descriptor makes (a strict fixed window's tries). */
    static final int MAX_CALLS = 4;

    private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

    private final RateLimiter limiter;
    private final PlanDecider peeker;
    private final ServerMetrics metrics;

    StreamDoneDecider(RateLimiter limiter, PlanDecider peeker, ServerMetrics metrics) {
        this.limiter = limiter;
        this.peeker = peeker;
        this.metrics = metrics;
    }

    /** Whether a plan has a stream-done descriptor. */
    static boolean any(Plan plan) {
        for (Item it : plan.items()) {
            if (it.kind() == Kind.CHARGE || it.kind() == Kind.RESERVE) {
                return true;
            }
        }
        return false;
    }

    /** The descriptor's decision: allowed for a charge or a settle, the estimate's for a reservation. */
    CompletableFuture<Decision> decide(Plan plan, Item it) {
        EnvoyStreamDoneStats stats = new EnvoyStreamDoneStats(plan.envoyApi() ? metrics.envoyStats() : null, it);
        return it.kind() == Kind.CHARGE ? charge(it, stats) : reserveOrSettle(plan, it, it.reserved(), stats);
    }

    private CompletableFuture<Decision> charge(Item it, EnvoyStreamDoneStats stats) {
        Limit l = it.storeLimit();
        long h = Math.min(it.hits(), l.capacity());
        if (l.algorithm().isTat()) {
            return call(() -> limiter.reserveAsync(it.storeKey(), l, h, FOREVER))
                    .thenApply(d -> {
                        stats.chargedTat(d, h);
                        return charged(d);
                    });
        }
        if (EnvoyDecider.counter(l)) {
            // envoy's counter holds every hit; the answer in the rule's numbers, as envoy reads its counter
            long c = it.matched().limitOfLimited().capacity();
            return call(() -> limiter.tryAcquireAsync(it.storeKey(), l, h)).thenApply(d -> {
                long count = l.capacity() - d.remaining();
                stats.counted(c, count - h);
                return new Decision(true, c, Math.max(0, c - count), 0, d.resetAfterNanos(), d.degradation());
            });
        }
        return fill(it, h, MAX_CALLS, 0, stats);
    }

    /**
     * A strict fixed window: {@code h} taken when they fit, else what is left, until the window is full.
     *
     * @param taken what the earlier tries took
     */
    private CompletableFuture<Decision> fill(Item it, long h, int tries, long taken, EnvoyStreamDoneStats stats) {
        return call(() -> limiter.tryAcquireAsync(it.storeKey(), it.storeLimit(), h))
                .thenCompose(d -> {
                    long now = taken + (d.allowed() ? h : 0);
                    if (d.allowed() || d.degraded() || d.remaining() == 0 || tries == 1) {
                        long c = it.storeLimit().capacity();
                        stats.counted(c, c - d.remaining() - now); // the count before the first try
                        return CompletableFuture.completedFuture(charged(d));
                    }
                    return fill(it, Math.min(h, d.remaining()), tries - 1, now, stats);
                });
    }

    private CompletableFuture<Decision> reserveOrSettle(Plan plan, Item it, Reservation r, EnvoyStreamDoneStats stats) {
        Limit l = it.storeLimit();
        long h = it.hits();
        if (h == 0) {
            return settle(plan, it, r, 0, stats).thenCompose(d -> d != null ? done(d) : peeker.look(it, 1));
        }
        if (h > l.capacity()) {
            return settle(plan, it, r, l.capacity(), stats).thenApply(d -> {
                if (d != null) {
                    return d;
                }
                stats.counted(l.capacity(), l.capacity()); // never granted: every hit over, as envoy counts it
                return neverGranted(l);
            });
        }
        return call(() -> limiter.tryAcquireEstimateAsync(it.storeKey(), l, h, r.id(), r.settleWithin()))
                .thenApply(d -> {
                    metrics.steps().estimated(plan.metricDomain(), it.metricRule(), d);
                    stats.decided(l.capacity(), d);
                    return d;
                })
                .exceptionallyCompose(t -> {
                    // everything else a reservation checks was checked when planning: the id is already pending
                    if (FailureKind.unwrap(t) instanceof IllegalArgumentException) {
                        return settle(plan, it, r, h, stats).thenApply(d -> d != null ? d : neverGranted(l));
                    }
                    return CompletableFuture.failedFuture(t);
                });
    }

    /** The settle's answer as a decision, or null when the reservation was not pending (then nothing is counted). */
    private CompletableFuture<@Nullable Decision> settle(
            Plan plan, Item it, Reservation r, long actual, EnvoyStreamDoneStats stats) {
        Limit l = it.storeLimit();
        return call(() -> limiter.settleAsync(it.storeKey(), l, r.id(), actual)).thenApply(s -> {
            if (!s.settled()) {
                return null;
            }
            metrics.steps().settled(plan.metricDomain(), it.metricRule(), s);
            stats.settled(l.capacity(), s);
            return new Decision(true, l.capacity(), s.remaining(), 0, 0);
        });
    }

    private static CompletableFuture<Decision> done(Decision d) {
        return CompletableFuture.completedFuture(d);
    }

    private static Decision neverGranted(Limit l) {
        long w = l.periodNanos();
        return new Decision(false, l.capacity(), 0, w, w);
    }

    /** A charge's decision: allowed (the work is done), without a wait, with what remains. */
    private static Decision charged(Decision d) {
        return new Decision(true, d.limit(), d.remaining(), 0, d.resetAfterNanos(), d.degradation());
    }

    /** The store's call, whose synchronous throw (a store's checks) fails the future instead. */
    private static <T> CompletableFuture<T> call(Supplier<CompletableFuture<T>> op) {
        try {
            return op.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
