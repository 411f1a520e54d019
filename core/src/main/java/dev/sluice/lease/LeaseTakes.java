package dev.sluice.lease;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link LeasedRateLimiter} decides a leased call: from the key's held permits under its {@link Lease}'s
 * monitor, or by a take from the store (and takes ahead), with the counts of store calls and local decisions. Apart
 * from the facade, which resolves the lease and passes the other calls to the store.
 */
final class LeaseTakes {
    private final RateLimiter store;
    private final Ticker ticker;
    private final long horizonNanos;
    private final long maxLease;
    final AtomicLong storeCalls = new AtomicLong();
    final AtomicLong localDecisions = new AtomicLong();

    LeaseTakes(RateLimiter store, Ticker ticker, long horizonNanos, long maxLease) {
        this.store = store;
        this.ticker = ticker;
        this.horizonNanos = horizonNanos;
        this.maxLease = maxLease;
    }

    /**
     * The take protocol, the one copy both views use: asks the store for {@code cost} plus the extra permits the
     * start chose, without the monitor (callers of this key go on deciding from what is held, or, when nothing is,
     * call the store too, for their cost alone, while this take is under way); then records the answer under the
     * monitor. A fixed window that denies the take because it is short of the extra permits is asked once more, for
     * the cost alone, as a plain store call: the caller is not counted again in the key's demand (re-entering the
     * lease path would count it twice) and the answer is returned as the store gives it.
     */
    CompletableFuture<Decision> take(Lease lease, String key, Limit limit, long cost, Start start) {
        long extra = start.extra();
        long sent = start.sent();
        storeCalls.incrementAndGet();
        CompletableFuture<Decision> f;
        try {
            f = store.tryAcquireAsync(key, limit, cost + extra);
        } catch (RuntimeException e) {
            synchronized (lease) {
                lease.endTake(extra);
            }
            throw e;
        }
        // a failed take ends here; the caller sees the failure through the future returned below
        CompletableFuture<?> unused = f.whenComplete((d, failure) -> {
            if (failure != null) {
                synchronized (lease) {
                    lease.endTake(extra);
                }
            }
        });
        return f.thenCompose(d -> {
            boolean again;
            synchronized (lease) {
                lease.taken(d, cost, extra, sent, ticker.read());
                lease.endTake(extra);
                again = lease.asksAgain(d, extra);
            }
            if (again) {
                return counted(store.tryAcquireAsync(key, limit, cost));
            }
            return CompletableFuture.completedFuture(extra == 0 || !d.allowed() ? d : Lease.asked(d, limit, extra));
        });
    }

    /** A call's start: its local decision, or the extra permits its take asks for and when that take is sent. */
    record Start(@Nullable Decision local, long extra, long sent) {}

    /**
     * Decides the call here (then starts a take ahead if one is due, outside the monitor) or begins its take.
     */
    Start start(Lease lease, String key, Limit limit, long cost) {
        long prefetch;
        Decision local;
        synchronized (lease) {
            local = local(lease, cost);
            if (local == null) {
                return new Start(null, lease.beginTake(cost, maxLease, horizonNanos), ticker.read());
            }
            prefetch = prefetch(lease);
        }
        if (prefetch > 0) {
            prefetch(lease, key, limit, prefetch);
        }
        return new Start(local, 0, 0);
    }

    /** Counts the call and decides it from held permits or a remembered denial; null: ask the store. Under the monitor. */
    private @Nullable Decision local(Lease lease, long cost) {
        lease.applyArrived();
        long now = ticker.read();
        lease.observe(now, horizonNanos);
        Decision d = lease.trySpend(now, cost);
        if (d != null) {
            localDecisions.incrementAndGet();
        }
        return d;
    }

    /** How many permits to take ahead now that this node's held permits run low (0: none). Under the monitor. */
    private long prefetch(Lease lease) {
        return lease.prefetch(ticker.read(), maxLease, horizonNanos);
    }

    /**
     * Takes {@code n} permits ahead, asynchronously, while the callers go on spending what is left: a node asked
     * steadily never waits for the store. Outside the monitor.
     */
    private void prefetch(Lease lease, String key, Limit limit, long n) {
        storeCalls.incrementAndGet();
        CompletableFuture<Decision> f;
        try {
            f = store.tryAcquireAsync(key, limit, n);
        } catch (RuntimeException e) {
            lease.arrived(null, n, ticker.read());
            return;
        }
        // the answer is applied by the next caller, under the monitor: the thread completing it (the store's I/O
        // thread) must never wait for the monitor, which a caller may hold while it waits for that very thread
        CompletableFuture<?> unused = f.whenComplete((d, failure) -> lease.arrived(d, n, ticker.read()));
    }

    /** Counts one store call and returns its answer. */
    <T> T counted(T d) {
        storeCalls.incrementAndGet();
        return d;
    }
}
