package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Algorithms;
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
 * The oracle: a store with no cleverness at all. One lock, one map from (key, limit) to the pure
 * {@link State}, every decision straight from {@link Algorithms}. The differential tests require every
 * real store to answer exactly as this one does. Not for production: it never forgets a key.
 */
public final class ReferenceRateLimiter implements RateLimiter {

    private record Id(String key, Limit limit) {}

    private final Ticker ticker;
    private final Map<Id, State> states = new HashMap<>();

    public ReferenceRateLimiter(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
    }

    @Override
    public synchronized Decision tryAcquire(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        Id id = new Id(key, limit);
        Step step = Algorithms.tryAcquire(state(id), ticker.read(), limit, cost);
        states.put(id, step.state());
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
        Map<Id, State> scratch = new HashMap<>();
        List<Decision> decisions = new ArrayList<>(permits.size());
        boolean all = true;
        for (Permit p : permits) {
            Id id = new Id(p.key(), p.limit());
            State s = scratch.containsKey(id) ? scratch.get(id) : state(id);
            Step step = Algorithms.tryAcquire(s, now, p.limit(), p.cost());
            scratch.put(id, step.state());
            decisions.add(step.decision());
            all &= step.decision().allowed();
        }
        Decision overall = Decision.mostRestrictive(decisions);
        if (all) {
            states.putAll(scratch);
            return new PermitDecisions(overall, decisions);
        }
        List<Decision> looks = new ArrayList<>(permits.size());
        for (Permit p : permits) {
            looks.add(Algorithms.peek(state(new Id(p.key(), p.limit())), now, p.limit(), p.cost()));
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
        Step step = Algorithms.reserve(state(id), ticker.read(), limit, cost, maxWaitNanos);
        states.put(id, step.state());
        return step.decision();
    }

    @Override
    public synchronized Decision peek(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        return Algorithms.peek(state(new Id(key, limit)), ticker.read(), limit, cost);
    }

    @Override
    public synchronized void reset(String key, Limit limit) {
        Permit.checkKeyAndLimit(key, limit);
        states.remove(new Id(key, limit));
    }

    private State state(Id id) {
        State s = states.get(id);
        return s != null ? s : Algorithms.fresh(id.limit());
    }

    @Override
    public void close() {}
}
