package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.tck.ForwardingRateLimiter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A real store (the in-memory one) that also tells the test each settle and release once it has happened, since
 * a response's end reaches the client before or after the filter settles, as the threads fall: the test waits for
 * the store's answer, not for time.
 */
final class ObservedLimiter extends ForwardingRateLimiter {
    private final LinkedBlockingQueue<Settlement> settled = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<Boolean> released = new LinkedBlockingQueue<>();

    ObservedLimiter(RateLimiter store) {
        super(store);
    }

    /** The next settle's answer; fails after 10 s (a hang guard: a settle takes microseconds). */
    Settlement nextSettle() throws InterruptedException {
        Settlement s = settled.poll(10, TimeUnit.SECONDS);
        if (s == null) {
            throw new AssertionError("no settle within 10 s");
        }
        return s;
    }

    /** The next release's answer; fails after 10 s. */
    boolean nextRelease() throws InterruptedException {
        Boolean r = released.poll(10, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("no release within 10 s");
        }
        return r;
    }

    /** Settles and releases observed and not yet taken by the test. */
    int pending() {
        return settled.size() + released.size();
    }

    @Override
    public Settlement settle(String key, Limit limit, String reservation, long actual) {
        Settlement s = delegate.settle(key, limit, reservation, actual);
        settled.add(s);
        return s;
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(String key, Limit limit, String reservation, long actual) {
        return delegate.settleAsync(key, limit, reservation, actual).whenComplete((s, e) -> {
            if (s != null) {
                settled.add(s);
            }
        });
    }

    @Override
    public InFlightLimiter inFlight() {
        InFlightLimiter slots = delegate.inFlight();
        return new InFlightLimiter() {
            @Override
            public Decision tryAcquire(String key, long maxInFlight, String holder, Duration lease) {
                return slots.tryAcquire(key, maxInFlight, holder, lease);
            }

            @Override
            public CompletableFuture<Decision> tryAcquireAsync(
                    String key, long maxInFlight, String holder, Duration lease) {
                return slots.tryAcquireAsync(key, maxInFlight, holder, lease);
            }

            @Override
            public boolean release(String key, String holder) {
                boolean r = slots.release(key, holder);
                released.add(r);
                return r;
            }

            @Override
            public CompletableFuture<Boolean> releaseAsync(String key, String holder) {
                return slots.releaseAsync(key, holder).whenComplete((r, e) -> released.add(r != null && r));
            }

            @Override
            public boolean renew(String key, String holder, Duration lease) {
                return slots.renew(key, holder, lease);
            }

            @Override
            public CompletableFuture<Boolean> renewAsync(String key, String holder, Duration lease) {
                return slots.renewAsync(key, holder, lease);
            }
        };
    }
}
