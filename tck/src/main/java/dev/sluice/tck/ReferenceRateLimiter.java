package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
import dev.sluice.algorithm.Inheritance;
import dev.sluice.algorithm.Settle;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.Step;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The oracle: a store with no cleverness at all. One lock, one map from (key, limit identity) to the pure
 * {@link State} and the limit it was written under, every decision straight from {@link Algorithms}, state written
 * under other numbers read through {@link Inheritance}. The differential tests require every real store to answer
 * exactly as this one does. Not for production: it never forgets a key.
 */
public final class ReferenceRateLimiter implements RateLimiter {

    private record Id(String key, String identity) {
        Id(String key, Limit limit) {
            this(key, limit.identity());
        }
    }

    /** A state and the limit whose numbers it was written under. */
    private record Written(Limit limit, State state) {
        State under(Limit other, long now) {
            return Inheritance.carryOver(state, now, limit, other);
        }
    }

    /** A pending reservation of {@link #tryAcquireEstimate}: its key, limit identity and id. */
    private record Reservation(Id state, String id) {}

    private record Pending(long estimate, long reservedAt, long expiresAt) {}

    private final Ticker ticker;
    private final Map<Id, Written> states = new HashMap<>();
    private final ReferenceInFlight inFlight;
    private final Map<Reservation, Pending> pending = new HashMap<>();

    public ReferenceRateLimiter(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.inFlight = new ReferenceInFlight(ticker);
    }

    /** Work in flight as the contract says it, with nothing clever: see {@link ReferenceInFlight}. */
    @Override
    public InFlightLimiter inFlight() {
        return inFlight;
    }

    @Override
    public synchronized Decision tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        Id id = new Id(key, limit);
        long now = ticker.read();
        Step step = Algorithms.tryAcquire(state(id, limit, now), now, limit, cost);
        states.put(id, new Written(limit, step.state()));
        return step.decision();
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
        return CompletableFuture.completedFuture(tryAcquire(key, limit, cost));
    }

    @Override
    public Decision tryAcquire(List<Permit> permits) {
        return tryAcquireEach(permits).decision();
    }

    /**
     * The permits' steps in request order on a scratch copy; all allowed: committed, each permit's step is its
     * decision; else nothing is written and each permit's decision is a peek of its cost on the state as it is.
     */
    @Override
    public synchronized PermitDecisions tryAcquireEach(List<Permit> permits) {
        Permit.checkAll(permits);
        long now = ticker.read();
        Map<Id, Written> scratch = new HashMap<>();
        // states read under other numbers than they were written under: written so even when the request is denied
        Map<Id, Written> read = new HashMap<>();
        List<Decision> decisions = new ArrayList<>(permits.size());
        boolean all = true;
        for (Permit p : permits) {
            Id id = new Id(p.key(), p.limit());
            Written w = scratch.get(id);
            State s = w != null ? w.under(p.limit(), now) : state(id, p.limit(), now);
            Written was = states.get(id);
            if (w == null && was != null && !was.limit().equals(p.limit())) {
                read.put(id, new Written(p.limit(), s));
            }
            Step step = Algorithms.tryAcquire(s, now, p.limit(), p.cost());
            scratch.put(id, new Written(p.limit(), step.state()));
            decisions.add(step.decision());
            all &= step.decision().allowed();
        }
        Decision overall = Decision.mostRestrictive(decisions);
        if (all) {
            states.putAll(scratch);
            return new PermitDecisions(overall, decisions);
        }
        states.putAll(read);
        List<Decision> looks = new ArrayList<>(permits.size());
        for (Permit p : permits) {
            looks.add(Algorithms.peek(state(new Id(p.key(), p.limit()), p.limit(), now), now, p.limit(), p.cost()));
        }
        return new PermitDecisions(overall, looks);
    }

    @Override
    public CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
        return CompletableFuture.completedFuture(tryAcquireEach(permits));
    }

    @Override
    public synchronized Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        long maxWaitNanos = Algorithms.checkReserve(key, limit, cost, maxWait);
        Id id = new Id(key, limit);
        long now = ticker.read();
        Step step = Algorithms.reserve(state(id, limit, now), now, limit, cost, maxWaitNanos);
        states.put(id, new Written(limit, step.state()));
        return step.decision();
    }

    @Override
    public synchronized Decision peek(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        long now = ticker.read();
        return Algorithms.peek(state(new Id(key, limit), limit, now), now, limit, cost);
    }

    @Override
    public synchronized void reset(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit);
        states.remove(new Id(key, limit));
    }

    /** {@link #tryAcquire(String, Limit, long)} of the estimate, and when allowed a pending record until settled. */
    @Override
    public synchronized Decision tryAcquireEstimate(
            String key, Limit limit, long estimate, String reservation, Duration settleWithin) {
        Permit.check(key, limit, estimate);
        Settlement.checkId("reservation", reservation);
        Settlement.checkWithin("settleWithin", settleWithin);
        Reservation r = new Reservation(new Id(key, limit), reservation);
        long now = ticker.read();
        Pending was = pending.get(r);
        if (was != null && now < was.expiresAt()) {
            throw new IllegalArgumentException("reservation '" + reservation + "' is already pending on key '" + key
                    + "' under " + limit.describe() + ": nothing was taken; use a new id per reservation");
        }
        pending.remove(r);
        Decision d = tryAcquire(key, limit, estimate);
        if (d.allowed()) {
            pending.put(r, new Pending(estimate, now, now + settleWithin.toNanos()));
        }
        return d;
    }

    /** The pending record removed and {@link Settle#settle} applied, or {@link Settlement#NOT_PENDING}. */
    @Override
    public synchronized Settlement settle(String key, Limit limit, String reservation, long actual) {
        Permit.checkKeyAndLimit(key, limit);
        Settlement.checkId("reservation", reservation);
        Settlement.checkActual(limit, actual);
        Id id = new Id(key, limit);
        long now = ticker.read();
        Pending p = pending.remove(new Reservation(id, reservation));
        if (p == null || now >= p.expiresAt()) {
            return Settlement.NOT_PENDING;
        }
        Settle.Settled settled = Settle.settle(state(id, limit, now), now, limit, p.estimate(), p.reservedAt(), actual);
        states.put(id, new Written(limit, settled.state()));
        return settled.settlement();
    }

    /** The state of {@code id} read under {@code limit}'s numbers at {@code now}. */
    private State state(Id id, Limit limit, long now) {
        Written w = states.get(id);
        return w != null ? w.under(limit, now) : Algorithms.fresh(limit);
    }

    @Override
    public void close() {}
}
