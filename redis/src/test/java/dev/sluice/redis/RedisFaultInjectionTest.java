package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.tck.Eventually;
import io.lettuce.core.RedisClient;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A real {@code redis-server} that this test owns (its PID): SIGKILL and restart on the same port, SIGSTOP and
 * SIGCONT, a name that does not resolve, and a script that fails on one key, each behind a
 * {@link FailSafeRateLimiter} while threads call it (half synchronously, half async), with the store's default
 * budget.
 *
 * <p>It asserts behaviour: no call threw or hung; while Redis was healthy no decision was degraded; while it is
 * down or frozen the policy decides, with the right cause; once it is back the store decides again, exactly (polled
 * with a generous deadline); across 20 kill/restart cycles no thread and no Redis connection is left behind. How
 * long calls take while Redis is down or frozen, and how soon decisions are exact again, are measured by the fault
 * benchmark ({@code bench/README.md}, "Faults"), not here: the suite runs on busy machines.
 */
class RedisFaultInjectionTest {

    /** A hang guard for one call: 10 budgets and more. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(10);

    private static final Duration PROBE = Duration.ofMillis(100);
    /** How long the tests poll for exact decisions once Redis is back: a hang guard, not a target. */
    private static final long RECOVERY_NANOS = TimeUnit.SECONDS.toNanos(60);

    private static final Duration OUTAGE = Duration.ofMillis(1500);
    private static final int THREADS = 4;
    /** Large enough that the load never runs out: its decisions show who decided, not the limit. */
    private static final Limit LOAD_LIMIT = Limit.tokenBucket(1_000_000_000L, Rate.perSecond(1_000_000));

    /** Every server any test started: killed after all, whatever happened (each test also closes its own). */
    private static final List<RedisServer> SERVERS = new ArrayList<>();

    @AfterAll
    static void killEveryServer() {
        synchronized (SERVERS) {
            SERVERS.forEach(RedisServer::close);
        }
    }

    private static RedisServer server() {
        RedisServer s = RedisServer.start();
        synchronized (SERVERS) {
            SERVERS.add(s);
        }
        return s;
    }

    private static RedisRateLimiter redis(RedisServer server) {
        return RedisRateLimiter.builder(server.uri()).cluster(false).build(); // the default budget
    }

    private static FailSafeRateLimiter failSafe(RateLimiter store, FailurePolicy policy) {
        return FailSafeRateLimiter.builder(store)
                .policy(policy)
                .probeInterval(PROBE)
                .build();
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void aKilledRedisIsDecidedByThePolicyAndExactAgainAfterItsRestart(FailurePolicy policy) {
        outage(policy, Degradation.UNAVAILABLE, RedisServer::kill, RedisServer::restart);
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void aFrozenRedisIsDecidedByThePolicyAndExactAgainAfterItResumes(FailurePolicy policy) {
        outage(policy, Degradation.TIMEOUT, RedisServer::pause, RedisServer::resume);
    }

    private void outage(
            FailurePolicy policy,
            Degradation cause,
            java.util.function.Consumer<RedisServer> fault,
            java.util.function.Consumer<RedisServer> repair) {
        try (RedisServer server = server();
                FailSafeRateLimiter limiter = failSafe(redis(server), policy)) {
            awaitExact(limiter); // a healthy store decides exactly
            Load load = new Load(limiter, policy, THREADS, "healthy");
            try {
                load.awaitCalls("healthy", 50);
                load.phase("fault");
                fault.accept(server);
                // the outage lasts until the circuit has opened and the load made 20 calls meanwhile
                Eventually.await(OUTAGE.multipliedBy(20), "the circuit open", () -> !limiter.storeHealthy());
                load.awaitCalls("fault", 20);
                assertThat(limiter.storeHealthy())
                        .as("the circuit is open during the outage")
                        .isFalse();
                policyDecides(limiter, policy, cause);
                load.phase("repaired");
                repair.accept(server);
                awaitExact(limiter);
                load.phase("after");
                load.awaitCalls("after", 50);
                load.stop();
                load.assertPolicyFollowed();
                assertThat(load.degradedIn("healthy"))
                        .as("degraded decisions of a healthy Redis")
                        .isZero();
                assertThat(load.causesByPhase.get("fault"))
                        .as("causes of the degraded decisions during the fault")
                        .contains(cause);
                assertThat(limiter.degradedCount(cause)).isPositive();
            } finally {
                load.stop();
                if (cause == Degradation.TIMEOUT) {
                    server.resume(); // a frozen process must not outlive a failed assertion (close kills it anyway)
                }
            }
        }
    }

    /** While the store is down, a fresh key gets exactly what the policy gives, and says why. */
    private static void policyDecides(FailSafeRateLimiter limiter, FailurePolicy policy, Degradation cause) {
        Limit three = Limit.tokenBucket(3, Rate.perHour(1));
        String key = "outage:" + System.nanoTime();
        List<Decision> ds = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ds.add(assertTimeoutPreemptively(HANG_GUARD, () -> limiter.tryAcquire(key, three)));
        }
        assertThat(ds).allSatisfy(d -> assertThat(d.degradation()).isEqualTo(cause));
        switch (policy) {
            case FAIL_OPEN ->
                assertThat(ds).allSatisfy(d -> assertThat(d).isEqualTo(new Decision(true, 3, 2, 0, 0, cause)));
            case FAIL_CLOSED ->
                assertThat(ds)
                        .allSatisfy(d -> assertThat(d)
                                .isEqualTo(new Decision(false, 3, 0, PROBE.toNanos(), PROBE.toNanos(), cause)));
            case FALLBACK_LOCAL ->
                assertThat(ds)
                        .extracting(Decision::allowed)
                        .containsExactly(true, true, true, false, false); // a local bucket of 3
        }
    }

    /** Waits until the store decides exactly again: a round on a fresh key, none of it degraded, admits exactly the limit. */
    private static void awaitExact(RateLimiter limiter) {
        AtomicInteger round = new AtomicInteger();
        try {
            Eventually.await(
                    Duration.ofNanos(RECOVERY_NANOS),
                    "decisions exact again after the store's return",
                    () -> exactRound(limiter, "recovery-" + round.getAndIncrement()));
        } catch (AssertionError e) {
            throw new AssertionError(
                    e.getMessage() + " (" + round + " rounds, the last one stopped by " + lastMiss + ")", e);
        }
    }

    /** Why the last round of {@link #exactRound} was not decided by Redis, for the failure message. */
    private static volatile Degradation lastMiss;

    /** Seven calls on a fresh key limited to five: true iff Redis decided all seven and admitted exactly five. */
    private static boolean exactRound(RateLimiter limiter, String tag) {
        Limit five = Limit.tokenBucket(5, Rate.perHour(1));
        String key = "exact:" + tag + ":" + System.nanoTime();
        int allowed = 0;
        for (int i = 0; i < 7; i++) {
            Decision d;
            try {
                d = limiter.tryAcquire(key, five);
            } catch (RedisStoreException e) {
                lastMiss = e.degradation();
                return false; // the store alone, not answering yet
            }
            if (d.degraded()) {
                lastMiss = d.degradation();
                return false;
            }
            allowed += d.allowed() ? 1 : 0;
        }
        assertThat(allowed)
                .as("admissions on a fresh key limited to 5, decided by Redis")
                .isEqualTo(5);
        return true;
    }

    /** The store alone, no policy: on a frozen Redis every call, sync or async, fails with TIMEOUT instead of hanging. */
    @Test
    void onAFrozenRedisEveryCallFailsWithATimeoutAndNoneHangs() throws Exception {
        try (RedisServer server = server();
                RedisRateLimiter store = redis(server)) {
            awaitExact(store);
            server.pause();
            try {
                List<Thread> callers = new ArrayList<>();
                ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
                LongAdder timeouts = new LongAdder();
                for (int t = 0; t < 4; t++) {
                    boolean async = t % 2 == 1;
                    Thread caller = new Thread(
                            () -> {
                                for (int i = 0; i < 5; i++) {
                                    Throwable e = null;
                                    try {
                                        if (async) {
                                            store.tryAcquireAsync("frozen", LOAD_LIMIT, 1)
                                                    .join();
                                        } else {
                                            store.tryAcquire("frozen", LOAD_LIMIT);
                                        }
                                    } catch (RuntimeException x) {
                                        e = x;
                                    }
                                    Throwable c = e instanceof CompletionException ? e.getCause() : e;
                                    if (c instanceof RedisStoreException r && r.degradation() == Degradation.TIMEOUT) {
                                        timeouts.increment();
                                    } else {
                                        wrong.add((async ? "async" : "sync") + ": not a timeout: " + e);
                                    }
                                }
                            },
                            "frozen-caller-" + t);
                    callers.add(caller);
                    caller.start();
                }
                for (Thread caller : callers) {
                    caller.join(HANG_GUARD.toMillis() * 5); // 5 calls each: the hang guard of each
                    assertThat(caller.isAlive())
                            .as("%s returned from every call", caller.getName())
                            .isFalse();
                }
                assertThat(wrong).isEmpty();
                assertThat(timeouts.sum()).isEqualTo(20);
            } finally {
                server.resume();
            }
            awaitExact(store); // and the same limiter decides again once Redis resumes
        }
    }

    @Test
    void twentyKillRestartCyclesUnderLoadLeakNoThreadAndNoConnection() {
        Set<Thread> before = liveThreads();
        try (RedisServer server = server()) {
            FailSafeRateLimiter limiter = failSafe(redis(server), FailurePolicy.FAIL_OPEN);
            Load load = new Load(limiter, FailurePolicy.FAIL_OPEN, 4, "start");
            try {
                for (int i = 0; i < 2; i++) {
                    cycle(server, limiter, load, "warm-up"); // Lettuce starts its event loop threads lazily
                }
                Set<Thread> running = liveThreads();
                int clients = server.connectedClients();
                assertThat(clients).as("the limiter's connection").isEqualTo(1);
                for (int i = 0; i < 20; i++) {
                    cycle(server, limiter, load, "cycle");
                }
                assertThat(names(liveThreads()))
                        .as("JVM threads after 20 kill/restart cycles")
                        .containsExactlyInAnyOrderElementsOf(names(running));
                assertThat(server.connectedClients())
                        .as("Redis connections after 20 kill/restart cycles")
                        .isEqualTo(clients);
                load.stop();
                load.assertPolicyFollowed();
            } finally {
                load.stop();
                limiter.close();
            }
            assertThat(server.connectedClients())
                    .as("Redis connections once the limiter is closed")
                    .isZero();
        }
        awaitNoNewThreads(before);
    }

    /** Kills Redis, restarts it on the same port at once, and waits for exact decisions. */
    private static void cycle(RedisServer server, RateLimiter limiter, Load load, String phase) {
        load.phase(phase);
        server.kill();
        sleep(Duration.ofMillis(20));
        server.restart();
        awaitExact(limiter);
    }

    /**
     * A host name that does not resolve is a misconfiguration, not an outage: {@code create()} and a fail-safe
     * {@code build()} fail at once naming it; started despite it, every call is degraded MISCONFIGURED by the policy
     * while the opener tries the name again with a backoff.
     */
    @Test
    void aNameThatDoesNotResolveFailsStartupAndDegradesEveryCallMisconfiguredWhenStartedDespiteIt() {
        Set<Thread> before = liveThreads();
        String uri = "redis://sluice-fault-test.invalid:6379";
        Throwable direct = catchThrowable(() -> RedisRateLimiter.builder(uri)
                .cluster(false)
                .connectTimeout(Duration.ofMillis(500))
                .build());
        assertThat(direct).isInstanceOf(RedisStoreException.class).hasMessageContaining("sluice-fault-test.invalid");
        assertThat(((RedisStoreException) direct).degradation()).isEqualTo(Degradation.MISCONFIGURED);
        java.util.function.Supplier<dev.sluice.RateLimiter> open = () -> RedisRateLimiter.builder(uri)
                .cluster(false)
                .connectTimeout(Duration.ofMillis(500))
                .build();
        assertThat(catchThrowable(() -> FailSafeRateLimiter.builder(open).build()))
                .isInstanceOf(RedisStoreException.class)
                .hasMessageContaining("does not resolve");

        try (FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(open)
                .startDespiteMisconfiguration(true)
                .policy(FailurePolicy.FAIL_CLOSED)
                .probeInterval(PROBE)
                .build()) {
            Load load = new Load(limiter, FailurePolicy.FAIL_CLOSED, 4, "unresolvable");
            load.awaitCalls("unresolvable", 100);
            load.stop();
            load.assertPolicyFollowed();
            assertThat(load.degradedIn("unresolvable")).isEqualTo(load.calls("unresolvable"));
            assertThat(load.degraded.keySet()).containsOnly(Degradation.MISCONFIGURED);
            assertThat(limiter.storeHealthy()).isFalse();
            assertThat(limiter.degradedCount(Degradation.MISCONFIGURED)).isEqualTo(load.calls("unresolvable"));
        }
        awaitNoNewThreads(before); // the opener and the client threads of every attempt end
    }

    @Test
    void aScriptErrorOnOneKeyDegradesThatKeyOnlyAndKeepsTheCircuitClosed() {
        Limit limit = Limit.tokenBucket(10, Rate.perSecond(1));
        try (RedisServer server = server();
                FailSafeRateLimiter limiter = failSafe(redis(server), FailurePolicy.FAIL_CLOSED)) {
            RedisClient admin = RedisClient.create(server.uri());
            try (var c = admin.connect(ByteArrayCodec.INSTANCE)) {
                // another application wrote a list where the limiter keeps this key's bucket
                c.sync().rpush(RedisKeys.of("sluice:", "foreign", limit), "x".getBytes(StandardCharsets.UTF_8));
            } finally {
                admin.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            }
            Load load = new Load(limiter, FailurePolicy.FAIL_CLOSED, 4, "foreign key");
            try {
                for (int i = 0; i < 20; i++) {
                    Decision d = limiter.tryAcquire("foreign", limit);
                    assertThat(d)
                            .isEqualTo(new Decision(
                                    false, 10, 0, PROBE.toNanos(), PROBE.toNanos(), Degradation.STORE_ERROR));
                    awaitExact(limiter); // other keys are decided by Redis, exactly
                }
                assertThat(limiter.storeHealthy())
                        .as("one bad key does not open the circuit")
                        .isTrue();
                load.stop();
                load.assertPolicyFollowed();
                assertThat(load.degraded)
                        .as("the load's own keys are never degraded")
                        .isEmpty();
                assertThat(limiter.degradedCount(Degradation.STORE_ERROR)).isEqualTo(20);
            } finally {
                load.stop();
            }
        }
    }

    // ------------------------------------------------------------------------------------------- helpers

    /**
     * Threads calling the limiter, each on its own key, each pausing 2 ms between calls. Even threads call
     * {@code tryAcquire}, odd ones {@code tryAcquireAsync(...).join()}. Every decision is checked against the
     * policy and counted under the phase the test names.
     */
    private static final class Load {
        final FailurePolicy policy;
        final List<Thread> threads = new ArrayList<>();
        final ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        final Map<Degradation, LongAdder> degraded = new ConcurrentHashMap<>();
        final Map<String, LongAdder> callsByPhase = new ConcurrentHashMap<>();
        final Map<String, LongAdder> degradedByPhase = new ConcurrentHashMap<>();
        final Map<String, Set<Degradation>> causesByPhase = new ConcurrentHashMap<>();
        volatile String phase;
        volatile boolean stopped;

        Load(RateLimiter limiter, FailurePolicy policy, int n, String firstPhase) {
            this.policy = policy;
            this.phase = firstPhase;
            for (int i = 0; i < n; i++) {
                boolean async = i % 2 == 1;
                String key = "load:" + i + ":" + System.nanoTime();
                Thread t = new Thread(() -> run(limiter, key, async), "fault-load-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
        }

        void phase(String p) {
            phase = p;
        }

        private void run(RateLimiter limiter, String key, boolean async) {
            while (!stopped) {
                Decision d;
                try {
                    d = async
                            ? limiter.tryAcquireAsync(key, LOAD_LIMIT, 1).join()
                            : limiter.tryAcquire(key, LOAD_LIMIT);
                } catch (RuntimeException e) {
                    wrong.add(phase + ": threw " + e);
                    continue;
                }
                // the phase the call ended in: one in flight when the test switched phase and broke Redis is the
                // fault's
                String p = phase;
                callsByPhase.computeIfAbsent(p, x -> new LongAdder()).increment();
                if (d.degraded()) {
                    degraded.computeIfAbsent(d.degradation(), x -> new LongAdder())
                            .increment();
                    degradedByPhase.computeIfAbsent(p, x -> new LongAdder()).increment();
                    causesByPhase
                            .computeIfAbsent(p, x -> ConcurrentHashMap.newKeySet())
                            .add(d.degradation());
                    boolean ok = switch (policy) {
                        case FAIL_OPEN -> d.allowed() && d.remaining() == LOAD_LIMIT.capacity() - 1;
                        case FAIL_CLOSED -> !d.allowed() && d.retryAfterNanos() == PROBE.toNanos();
                        case FALLBACK_LOCAL -> d.allowed(); // a local bucket of a billion
                    };
                    if (!ok) {
                        wrong.add(p + ": " + policy + " gave " + d);
                    }
                } else if (!d.allowed()) {
                    wrong.add(p + ": Redis denied a key with a billion permits: " + d);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }
        }

        /** Waits (a hang guard of a minute) until the load made {@code n} calls in phase {@code p}. */
        void awaitCalls(String p, long n) {
            Eventually.await(
                    Duration.ofSeconds(60),
                    n + " calls in phase " + p + " (the load keeps making progress)",
                    () -> calls(p) >= n);
        }

        long calls(String p) {
            LongAdder a = callsByPhase.get(p);
            return a == null ? 0 : a.sum();
        }

        long degradedIn(String p) {
            LongAdder a = degradedByPhase.get(p);
            return a == null ? 0 : a.sum();
        }

        void stop() {
            if (stopped) {
                return;
            }
            stopped = true;
            for (Thread t : threads) {
                try {
                    t.join(HANG_GUARD.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                assertThat(t.isAlive())
                        .as("%s returned from its last call", t.getName())
                        .isFalse();
            }
        }

        void assertPolicyFollowed() {
            assertThat(wrong)
                    .as("decisions the policy would not give, or exceptions")
                    .isEmpty();
        }
    }

    private static Set<Thread> liveThreads() {
        Set<Thread> out = new HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && !jvmWide(t.getName())) {
                out.add(t);
            }
        }
        return out;
    }

    /**
     * Threads the JVM shares among everything and starts and ends on its own schedule: process reapers (for the
     * redis-server and kill processes), the common pool, the delay scheduler behind {@code orTimeout} (one per
     * JVM), Sluice's one deadline timer (one per JVM) and Netty's global event executor (one per JVM, it stops
     * after a second of idleness). None belongs to a limiter.
     */
    private static boolean jvmWide(String name) {
        return name.startsWith("process reaper")
                || name.startsWith("ForkJoinPool")
                || name.equals("CompletableFutureDelayScheduler")
                || name.equals("sluice-deadlines")
                || name.startsWith("globalEventExecutor");
    }

    private static List<String> names(Set<Thread> threads) {
        return threads.stream().map(Thread::getName).sorted().toList();
    }

    /** Every thread started since {@code before} has ended (closing waits for Lettuce; a thread may linger a moment). */
    private static void awaitNoNewThreads(Set<Thread> before) {
        try {
            Eventually.await(Duration.ofSeconds(30), "no thread left behind", () -> {
                Set<Thread> extra = liveThreads();
                extra.removeAll(before);
                return extra.isEmpty();
            });
        } catch (AssertionError e) {
            Set<Thread> extra = liveThreads();
            extra.removeAll(before);
            assertThat(names(extra)).as("threads left behind").isEmpty();
        }
    }

    private static void sleep(Duration d) {
        RedisServer.sleep(d.toMillis());
    }
}
