package dev.sluice.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A deterministic simulation of a fleet: N nodes, each a {@link LeasedRateLimiter}, on one shared store, one
 * {@link ManualTicker} for all, random and bursty arrivals over skewed keys, and nodes that crash (losing what they
 * hold) and come back. Checks, for every key:
 * <ul>
 *   <li><b>never over-admits</b>: the fleet's admissions, in time order, are all admitted by one fresh shared
 *       limiter fed only them, so at no instant did the fleet admit more than one shared limiter allows;</li>
 *   <li><b>under-admits within the bound</b>: at every call, the permits the shared state lacks compared with that
 *       limiter are at most the nodes' last two takes ({@code 2 × (maxLease + cost)} each, crashed nodes
 *       included).</li>
 * </ul>
 * It also prints, per scenario, how many permits one shared limiter fed every request would have admitted.
 */
class LeaseSimulationTest {

    private static final long START = 1_700_000_000_000_000_000L;
    private static final long MAX_COST = 5;

    record Scenario(String name, Limit limit, int nodes, long maxLease, long seed) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Scenario> scenarios() {
        List<Scenario> out = new ArrayList<>();
        long seed = 1;
        for (int nodes : new int[] {1, 3, 8}) {
            out.add(new Scenario(
                    "token bucket 50, 2000/s, " + nodes + " nodes",
                    Limit.tokenBucket(50, Rate.perSecond(2000)),
                    nodes,
                    16,
                    seed++));
            out.add(new Scenario(
                    "gcra 5000/s burst 400, " + nodes + " nodes",
                    Limit.gcra(Rate.perSecond(5000), 400),
                    nodes,
                    64,
                    seed++));
            out.add(new Scenario(
                    "token bucket 7 per 3 s, " + nodes + " nodes",
                    Limit.tokenBucket(7, Rate.of(7, Duration.ofSeconds(3))),
                    nodes,
                    4,
                    seed++));
            out.add(new Scenario(
                    "fixed window 300 per 100 ms, " + nodes + " nodes",
                    Limit.fixedWindow(300, Duration.ofMillis(100)),
                    nodes,
                    32,
                    seed++));
        }
        return out;
    }

    /** One call as the fleet made it, and what the fleet answered. */
    record Call(long at, String key, long cost, boolean allowed) {}

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void theFleetNeverAdmitsMoreThanOneSharedLimiterAndUnderAdmitsWithinTheBound(Scenario s) {
        ManualTicker clock = ManualTicker.atEpochNanos(START);
        RateLimiter shared = InMemoryRateLimiter.builder().ticker(clock).build();
        // one shared limiter fed exactly the fleet's admissions, as they happen
        ManualTicker referenceClock = ManualTicker.atEpochNanos(START);
        RateLimiter reference =
                InMemoryRateLimiter.builder().ticker(referenceClock).build();
        LeasedRateLimiter[] nodes = new LeasedRateLimiter[s.nodes];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = node(shared, clock, s.maxLease);
        }
        SplittableRandom random = new SplittableRandom(s.seed);
        String[] keys = {"hot", "warm", "cold-1", "cold-2", "cold-3"};
        int crashes = 0;
        List<Call> calls = new ArrayList<>();
        long storeCalls = 0;
        long decisions = 0;
        long worstDeficit = 0;
        for (int step = 0; step < 40_000; step++) {
            // time: mostly tiny steps (a busy key), sometimes a pause long enough to refill, sometimes none (a burst)
            int r = random.nextInt(100);
            clock.advanceNanos(r < 30 ? 0 : r < 97 ? random.nextLong(1, 400_000) : random.nextLong(1, 200_000_000));
            referenceClock.set(clock.read());
            if (random.nextInt(4_000) == 0) {
                int victim = random.nextInt(nodes.length); // a crash: what it held is gone, never given back
                crashes++;
                storeCalls += nodes[victim].storeCalls();
                nodes[victim] = node(shared, clock, s.maxLease);
            }
            int burst = random.nextInt(100) < 5 ? random.nextInt(10, 60) : 1;
            for (int b = 0; b < burst; b++) {
                // skewed keys: the hot key most of the time
                int k = random.nextInt(100);
                String key = keys[k < 70 ? 0 : k < 90 ? 1 : 2 + random.nextInt(3)];
                long cost = random.nextInt(10) == 0 ? random.nextLong(1, MAX_COST + 1) : 1;
                Decision d = nodes[random.nextInt(nodes.length)].tryAcquire(key, s.limit, cost);
                decisions++;
                Call c = new Call(clock.read(), key, cost, d.allowed());
                calls.add(c);
                // 1. never over-admits: one shared limiter fed only the fleet's admissions admits each of them
                if (c.allowed) {
                    assertThat(reference.tryAcquire(key, s.limit, cost).allowed())
                            .as("%s step %d: the fleet admitted %s, which one shared limiter would not", s, step, c)
                            .isTrue();
                }
                // 2. the shared state is behind that limiter by no more than the nodes' last two takes (held, or spent
                // and queued behind them in the shared schedule), and what crashed nodes held
                long bound = 2L * (s.nodes + crashes) * (s.maxLease + MAX_COST) + 1;
                long deficit = reference.peek(key, s.limit).remaining()
                        - shared.peek(key, s.limit).remaining();
                assertThat(deficit)
                        .as("%s step %d key %s: permits the fleet cannot use", s, step, key)
                        .isLessThanOrEqualTo(bound);
                worstDeficit = Math.max(worstDeficit, deficit);
            }
        }
        for (LeasedRateLimiter n : nodes) {
            storeCalls += n.storeCalls();
        }
        // the measure of the run: one shared limiter fed every request vs the fleet (printed, not a bound)
        StringBuilder report =
                new StringBuilder(s + ": " + decisions + " decisions, " + storeCalls + " store calls, worst"
                        + " deficit " + worstDeficit + " permits (bound without crashes "
                        + 2L * s.nodes * (s.maxLease + MAX_COST)
                        + ", with the " + crashes + " crashes "
                        + (2L * (s.nodes + crashes) * (s.maxLease + MAX_COST) + 1) + ")");
        for (String key : new String[] {"hot", "warm"}) {
            ManualTicker idealClock = ManualTicker.atEpochNanos(START);
            RateLimiter ideal = InMemoryRateLimiter.builder().ticker(idealClock).build();
            long fleet = 0;
            long one = 0;
            for (Call c : calls) {
                if (c.key.equals(key)) {
                    idealClock.set(c.at);
                    one += ideal.tryAcquire(c.key, s.limit, c.cost).allowed() ? c.cost : 0;
                    fleet += c.allowed ? c.cost : 0;
                }
            }
            report.append("; ")
                    .append(key)
                    .append(": fleet admitted ")
                    .append(fleet)
                    .append(", one shared limiter ")
                    .append(one);
        }
        System.out.println(report);
        if (s.nodes > 1) {
            assertThat(storeCalls).as("%s: leases spared store calls", s).isLessThan(decisions);
        }
    }

    private static LeasedRateLimiter node(RateLimiter shared, ManualTicker clock, long maxLease) {
        return LeasedRateLimiter.builder(shared)
                .ticker(clock)
                .maxLease(maxLease)
                .horizon(Duration.ofMillis(20))
                .build();
    }
}
