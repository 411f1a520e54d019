package dev.sluice.gateway;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.LogThrottle;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * What one exchange holds while it runs through the gateway: a slot of work in flight and a reservation of a cost
 * known afterwards, each optional; given back once, when the exchange ends (the downstream's response written to
 * the client, an error, or the client gone).
 *
 * <p>One random UUID per exchange is its slot holder id and its reservation id. Every call is asynchronous, so the
 * event loop never blocks on a remote store. A failed release or settle is logged and left to the store: the slot
 * frees itself when its lease ends, and the reservation settles at its estimate after its {@code settleWithin}.
 */
final class ExchangeHolds {
    private static final System.Logger LOG = System.getLogger(ExchangeHolds.class.getName());
    private static final LogThrottle THROTTLE = new LogThrottle();

    /** The answer of a step the route does not have. */
    private static final Decision NOTHING_TO_TAKE = new Decision(true, 1, 1, 0, 0);

    private final RateLimiter store;
    private final SluiceLimitGatewayFilterFactory.Route route;
    private final String key;
    private final String id = UUID.randomUUID().toString();
    private boolean slotHeld;
    private boolean reserved;
    private final AtomicBoolean ended = new AtomicBoolean();

    ExchangeHolds(RateLimiter store, SluiceLimitGatewayFilterFactory.Route route, String key) {
        this.store = store;
        this.route = route;
        this.key = key;
    }

    /** Takes the route's slot of the key (an allowed decision when the route has no max in flight). */
    Mono<Decision> takeSlot() {
        if (route.maxInFlight() == 0) {
            return Mono.just(NOTHING_TO_TAKE);
        }
        return Mono.fromFuture(() -> store.inFlight().tryAcquireAsync(key, route.maxInFlight(), id, route.lease()))
                .doOnNext(d -> slotHeld = d.allowed());
    }

    /** Reserves the route's estimate (an allowed decision when the route has no cost after). */
    Mono<Decision> reserve() {
        Limit limit = route.limit();
        if (limit == null) {
            return Mono.just(NOTHING_TO_TAKE);
        }
        return Mono.fromFuture(
                        () -> store.tryAcquireEstimateAsync(key, limit, route.estimate(), id, route.settleWithin()))
                .doOnNext(d -> reserved = d.allowed());
    }

    /** Gives back what was taken without running the exchange (a later step denied it): settles at 0. */
    void undo() {
        end(0);
    }

    /** The exchange has ended: releases the slot, settles on the actual cost reported (else the estimate). */
    void finish(ServerWebExchange exchange) {
        long actual = route.actual(exchange);
        Limit limit = route.limit();
        end(actual < 0 || limit == null ? route.estimate() : Math.min(actual, limit.capacity()));
    }

    private void end(long actual) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        if (slotHeld) {
            var unused = store.inFlight().releaseAsync(key, id).whenComplete((released, e) -> {
                if (e != null) {
                    warn(
                            "releasing the in-flight slot of route '" + route.id() + "' failed; its lease of "
                                    + route.lease() + " frees it",
                            e);
                }
            });
        }
        Limit limit = route.limit();
        if (reserved && limit != null) {
            var unused = store.settleAsync(key, limit, id, actual).whenComplete((s, e) -> {
                if (e != null) {
                    warn(
                            "settling the cost of route '" + route.id() + "' at " + actual + " failed; its estimate "
                                    + route.estimate() + " stands",
                            e);
                }
            });
        }
    }

    static void warn(String message, @Nullable Throwable e) {
        if (THROTTLE.allow(message.substring(0, Math.min(20, message.length())))) {
            long n = THROTTLE.suppressedSinceLast();
            LOG.log(System.Logger.Level.WARNING, message + (n == 0 ? "" : " (" + n + " similar lines left out)"), e);
        }
    }
}
