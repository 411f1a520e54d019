package dev.sluice.server;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
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
import java.util.concurrent.CompletableFuture;

/**
 * A test store with the {@code peek} that core does not have yet, to exercise the service's check-only
 * ({@code hits: 0}) and per-descriptor paths. One lock, the pure steps of {@code dev.sluice.algorithm} (like the
 * TCK's reference store), and peek computed from two pure steps whose states are thrown away:
 * <ul>
 *   <li>{@code allowed}, {@code retryAfter}: the step for {@code cost};</li>
 *   <li>{@code remaining} now: the allowed step's remaining + cost ({@code floor(x − q) + q = floor(x)}), or the
 *       denied step's (a denial describes the unchanged state);</li>
 *   <li>{@code resetAfter} now: the step for the whole capacity: allowed only when the state is fresh (reset
 *       0), otherwise a denial that describes the unchanged state.</li>
 * </ul>
 * The same two steps on the in-memory store's slot, without the compare-and-set, would be core's peek.
 */
public final class PeekingStore implements RateLimiter {
    private record Id(String key, Limit limit) {
    }

    private final Ticker ticker;
    private final Map<Id, State> states = new HashMap<>();

    PeekingStore(Ticker ticker) {
        this.ticker = ticker;
    }

    public synchronized Decision peek(String key, Limit limit, long cost) {
        Permit.check(key, limit, cost);
        State s = state(new Id(key, limit));
        long now = ticker.read();
        Decision d = Algorithms.tryAcquire(s, now, limit, cost).decision();
        Decision whole = Algorithms.tryAcquire(s, now, limit, limit.capacity()).decision();
        long remaining = d.allowed() ? d.remaining() + cost : d.remaining();
        long reset = whole.allowed() ? 0 : whole.resetAfterNanos();
        return new Decision(d.allowed(), limit.capacity(), remaining, d.retryAfterNanos(), reset);
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
    public synchronized Decision tryAcquire(List<Permit> permits) {
        long now = ticker.read();
        Map<Id, State> scratch = new HashMap<>();
        List<Decision> decisions = new ArrayList<>();
        boolean all = true;
        for (Permit p : permits) {
            Id id = new Id(p.key(), p.limit());
            State s = scratch.containsKey(id) ? scratch.get(id) : state(id);
            Step step = Algorithms.tryAcquire(s, now, p.limit(), p.cost());
            scratch.put(id, step.state());
            decisions.add(step.decision());
            all &= step.decision().allowed();
        }
        if (all) {
            states.putAll(scratch);
        }
        return Decision.mostRestrictive(decisions);
    }

    @Override
    public synchronized Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
        Id id = new Id(key, limit);
        Step step = Algorithms.reserve(state(id), ticker.read(), limit, cost, maxWait.toNanos());
        states.put(id, step.state());
        return step.decision();
    }

    @Override
    public synchronized void reset(String key, Limit limit) {
        states.remove(new Id(key, limit));
    }

    private State state(Id id) {
        State s = states.get(id);
        return s != null ? s : Algorithms.fresh(id.limit());
    }

    @Override
    public void close() {
    }
}
