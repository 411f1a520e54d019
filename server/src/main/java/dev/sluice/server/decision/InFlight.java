package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.RateLimiter;
import dev.sluice.algorithm.InFlightSlots;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.decision.StepMetrics.Slot;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Work in flight on Sluice's own API: {@code POST /v1/in-flight/acquire}, {@code /release} and {@code /renew} take,
 * give back and extend a slot of a key with a lease on the store's {@link InFlightLimiter} ({@link
 * RateLimiter#inFlight()}), through whatever wraps the store: a failure policy decides an acquire the store cannot
 * ({@link dev.sluice.failsafe.FailSafeRateLimiter#inFlight()}); leases ({@code --leases}) are skipped, as for envoy's
 * counts, since a slot is counted at the store or not at all.
 *
 * <p><b>Keys.</b> A slot's key is the request's {@code domain} and {@code key}, as the store key of a descriptor
 * {@code [key=<key>]} of that domain ({@link StoreKeys}: escaped, SHA-256 beyond the store's bound), so domains never
 * share slots; the maximum is the caller's on each call (no rule is involved). Slots live apart from rate-limit
 * state: the same key may be both.
 *
 * <p>Bad input (a maximum below 1, an empty key, a holder id or a lease out of range) fails with a {@link
 * BadRequestException} of type {@value #PROBLEM} before the store is called; the store's failures as {@link
 * StoreCalls} translates them (a store without slots: 501).
 */
public final class InFlight {
    /** The problem type of bad input. */
    public static final String PROBLEM = "invalid-in-flight";

    private final RateLimiter limiter;
    private final StoreCalls calls;
    private final StepMetrics metrics;

    InFlight(RateLimiter limiter, StoreCalls calls, StepMetrics metrics) {
        this.limiter = limiter;
        this.calls = calls;
        this.metrics = metrics;
    }

    /** Takes a slot of {@code domain}'s {@code key} for {@code holder}, or renews the one it holds. */
    public CompletableFuture<Decision> acquire(String domain, String key, long max, String holder, long leaseNanos) {
        try {
            String k = storeKey(domain, key);
            Duration lease = Duration.ofNanos(leaseNanos);
            check(() -> InFlightSlots.checkAcquire(k, max, holder, lease));
            return calls.run(1, () -> limiter.inFlight().tryAcquireAsync(k, max, holder, lease))
                    .thenApply(d -> {
                        metrics.slot(domain, d.allowed() ? Slot.ACQUIRED : Slot.DENIED);
                        return d;
                    });
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Gives back {@code holder}'s slot: true when it was held (and its lease had not ended). */
    public CompletableFuture<Boolean> release(String domain, String key, String holder) {
        try {
            String k = storeKey(domain, key);
            check(() -> {
                InFlightSlots.checkRelease(k, holder);
                return 0L;
            });
            return calls.run(1, () -> limiter.inFlight().releaseAsync(k, holder))
                    .thenApply(held -> counted(domain, held, Slot.RELEASED, Slot.RELEASE_NOT_HELD));
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Extends {@code holder}'s held slot to {@code leaseNanos} from now: false when it is no longer held. */
    public CompletableFuture<Boolean> renew(String domain, String key, String holder, long leaseNanos) {
        try {
            String k = storeKey(domain, key);
            Duration lease = Duration.ofNanos(leaseNanos);
            check(() -> InFlightSlots.checkRenew(k, holder, lease));
            return calls.run(1, () -> limiter.inFlight().renewAsync(k, holder, lease))
                    .thenApply(held -> counted(domain, held, Slot.RENEWED, Slot.RENEW_NOT_HELD));
        } catch (BadRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private boolean counted(String domain, boolean held, Slot ifHeld, Slot ifNot) {
        metrics.slot(domain, held ? ifHeld : ifNot);
        return held;
    }

    /** The store key of {@code domain}'s {@code key}: a descriptor {@code [key=<key>]} of the domain. */
    static String storeKey(String domain, String key) {
        if (key.isEmpty()) {
            throw new BadRequestException(PROBLEM, "key is empty: name what the slots are counted for, e.g. a tenant");
        }
        return StoreKeys.storeKey(domain, List.of(new Entry("key", key)));
    }

    /** Runs the store's own checks (nothing is sent yet): what they refuse is a 400 naming the value. */
    private static void check(Supplier<Long> checks) {
        try {
            long unused = checks.get();
        } catch (IllegalArgumentException e) {
            throw new BadRequestException(PROBLEM, e.getMessage());
        }
    }
}
