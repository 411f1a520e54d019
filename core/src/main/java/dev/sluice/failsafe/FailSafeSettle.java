package dev.sluice.failsafe;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * {@link FailSafeRateLimiter}'s side of a cost known afterwards ({@code tryAcquireEstimate}, then {@code settle}).
 *
 * <ul>
 *   <li>An estimate the store cannot decide is decided by the policy, counted and marked degraded as any decision:
 *       {@code FAIL_OPEN} allows, {@code FAIL_CLOSED} denies, and neither leaves anything pending (its settle finds
 *       nothing: {@link Settlement#NOT_PENDING}); {@code FALLBACK_LOCAL} reserves on the local limiter, where the
 *       reservation is pending (when the local table of reservations is full, the local limiter takes the estimate
 *       with nothing pending).
 *   <li>A settle the store cannot make (it failed, or the circuit is open) is not retried: it answers {@link
 *       Settlement#NOT_PENDING}, what a settle that came after {@code settleWithin} answers, and the reservation's
 *       estimate stands in the store (where it expires). It is a store failure like any: it counts towards opening
 *       the circuit, the outage is logged ({@link OutageLog}) and the settle is counted as degraded ({@link
 *       FailSafeRateLimiter#degradedCount}). It never throws the store's failure; the caller's mistakes propagate.
 *   <li>With {@code FALLBACK_LOCAL}, a reservation the store does not have pending (it answered {@code NOT_PENDING},
 *       or could not settle) is settled on the local limiter, so what was reserved there during an outage is settled
 *       there, even once the store is back.
 * </ul>
 */
final class FailSafeSettle {
    private final Circuit circuit;
    private final PolicyDecisions byPolicy;
    private final Supplier<@Nullable RateLimiter> storeToTry;

    FailSafeSettle(Circuit circuit, PolicyDecisions byPolicy, Supplier<@Nullable RateLimiter> storeToTry) {
        this.circuit = circuit;
        this.byPolicy = byPolicy;
        this.storeToTry = storeToTry;
    }

    Decision tryAcquireEstimate(String key, Limit limit, long estimate, String id, Duration within) {
        check(key, limit, estimate, id, within);
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return byPolicy.decideEstimate(key, limit, estimate, id, within, circuit.cause());
        }
        Decision d;
        try {
            d = s.tryAcquireEstimate(key, limit, estimate, id, within);
        } catch (RuntimeException e) {
            return byPolicy.decideEstimate(key, limit, estimate, id, within, circuit.failed(e));
        }
        circuit.succeeded();
        return d;
    }

    CompletableFuture<Decision> tryAcquireEstimateAsync(
            String key, Limit limit, long estimate, String id, Duration within) {
        check(key, limit, estimate, id, within);
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return CompletableFuture.completedFuture(
                    byPolicy.decideEstimate(key, limit, estimate, id, within, circuit.cause()));
        }
        return ask(() -> s.tryAcquireEstimateAsync(key, limit, estimate, id, within))
                .handle((d, e) -> {
                    if (e != null) {
                        return byPolicy.decideEstimate(key, limit, estimate, id, within, circuit.failed(e));
                    }
                    circuit.succeeded();
                    return d;
                });
    }

    Settlement settle(String key, Limit limit, String id, long actual) {
        checkSettle(key, limit, id, actual);
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return unsettled(key, limit, id, actual, circuit.cause());
        }
        Settlement x;
        try {
            x = s.settle(key, limit, id, actual);
        } catch (RuntimeException e) {
            return unsettled(key, limit, id, actual, circuit.failed(e));
        }
        circuit.succeeded();
        return x.settled() ? x : byPolicy.settleLocally(key, limit, id, actual);
    }

    CompletableFuture<Settlement> settleAsync(String key, Limit limit, String id, long actual) {
        checkSettle(key, limit, id, actual);
        RateLimiter s = storeToTry.get();
        if (s == null) {
            return CompletableFuture.completedFuture(unsettled(key, limit, id, actual, circuit.cause()));
        }
        return ask(() -> s.settleAsync(key, limit, id, actual)).handle((x, e) -> {
            if (e != null) {
                return unsettled(key, limit, id, actual, circuit.failed(e));
            }
            circuit.succeeded();
            return x.settled() ? x : byPolicy.settleLocally(key, limit, id, actual);
        });
    }

    /** A settle the store could not make: counted under {@code cause}, settled locally if it was reserved there. */
    private Settlement unsettled(String key, Limit limit, String id, long actual, Degradation cause) {
        byPolicy.countDegraded(cause);
        return byPolicy.settleLocally(key, limit, id, actual);
    }

    private static <T> CompletableFuture<T> ask(Supplier<CompletableFuture<T>> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static void check(String key, Limit limit, long estimate, String id, Duration within) {
        Permit.check(key, limit, estimate);
        Settlement.checkId("reservation", id);
        Settlement.checkWithin("settleWithin", within);
    }

    private static void checkSettle(String key, Limit limit, String id, long actual) {
        Permit.checkKeyAndLimit(key, limit);
        Settlement.checkId("reservation", id);
        Settlement.checkActual(limit, actual);
    }
}
