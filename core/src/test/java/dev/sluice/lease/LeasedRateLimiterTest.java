package dev.sluice.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LeasedRateLimiterTest {

    private static final long START = 1_700_000_000_000_000_000L;

    @Test
    void aHotKeyIsDecidedLocallyWithOneStoreCallPerManyDecisions() {
        ManualTicker clock = ManualTicker.atEpochNanos(START);
        Limit limit = Limit.tokenBucket(1_000_000, Rate.perSecond(1_000_000));
        try (LeasedRateLimiter node = LeasedRateLimiter.builder(
                        InMemoryRateLimiter.builder().ticker(clock).build())
                .ticker(clock)
                .build()) {
            for (int i = 0; i < 100_000; i++) {
                clock.advanceNanos(1_000); // 1M calls per second here, the limit's rate
                assertThat(node.tryAcquire("hot", limit).allowed()).isTrue();
            }
            assertThat(node.storeCalls())
                    .as("store calls for 100,000 decisions")
                    .isLessThanOrEqualTo(100_000 / 64);
            // takes ahead are store calls without a caller: the callers waited for the store at most this often
            assertThat(node.localDecisions()).isGreaterThanOrEqualTo(100_000 - node.storeCalls());
        }
    }

    @Test
    void aColdKeyIsExactlyOnePlainStoreCall() {
        ManualTicker clock = ManualTicker.atEpochNanos(START);
        Limit limit = Limit.tokenBucket(10, Rate.perSecond(1));
        try (LeasedRateLimiter node = LeasedRateLimiter.builder(
                        InMemoryRateLimiter.builder().ticker(clock).build())
                .ticker(clock)
                .build()) {
            Decision d = node.tryAcquire("cold", limit);
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(9);
            assertThat(node.held("cold", limit)).isZero();
            assertThat(node.storeCalls()).isEqualTo(1);
        }
    }

    @Test
    void threadsOfSeveralNodesNeverAdmitMoreThanTheLimit() throws Exception {
        ManualTicker clock = ManualTicker.atEpochNanos(START); // time stands still: exactly the capacity may pass
        RateLimiter shared = InMemoryRateLimiter.builder().ticker(clock).build();
        Limit limit = Limit.tokenBucket(5_000, Rate.perHour(1));
        List<LeasedRateLimiter> nodes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            nodes.add(
                    LeasedRateLimiter.builder(shared).ticker(clock).maxLease(64).build());
        }
        AtomicLong admitted = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Callable<Void>> tasks = new ArrayList<>();
            for (int t = 0; t < 6; t++) {
                LeasedRateLimiter node = nodes.get(t % 3);
                tasks.add(() -> {
                    for (int i = 0; i < 3_000; i++) {
                        if (node.tryAcquire("hot", limit).allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                });
            }
            for (Future<Void> f : pool.invokeAll(tasks)) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        long held = nodes.stream().mapToLong(n -> n.held("hot", limit)).sum();
        assertThat(admitted.get()).isLessThanOrEqualTo(5_000);
        assertThat(admitted.get() + held)
                .as("admitted plus held is what the shared state gave out")
                .isEqualTo(5_000);
        assertThat(shared.peek("hot", limit).remaining()).isZero();
    }

    @Test
    void aRememberedDenialNeverTellsACallerToRetryBeforeTheStoreWouldAdmit() {
        ManualTicker clock = ManualTicker.atEpochNanos(START);
        RateLimiter shared = InMemoryRateLimiter.builder().ticker(clock).build();
        Limit limit = Limit.tokenBucket(2, Rate.perSecond(1));
        try (LeasedRateLimiter node =
                LeasedRateLimiter.builder(shared).ticker(clock).build()) {
            node.tryAcquire("k", limit);
            node.tryAcquire("k", limit);
            Decision first = node.tryAcquire("k", limit);
            assertThat(first.denied()).isTrue();
            long calls = node.storeCalls();
            clock.advance(Duration.ofMillis(300));
            Decision again = node.tryAcquire("k", limit);
            assertThat(again.denied()).isTrue();
            assertThat(node.storeCalls()).as("denied again without the store").isEqualTo(calls);
            assertThat(again.retryAfterNanos())
                    .isGreaterThanOrEqualTo(shared.peek("k", limit).retryAfterNanos());
            clock.advanceNanos(again.retryAfterNanos());
            assertThat(node.tryAcquire("k", limit).allowed()).isTrue();
        }
    }

    @Test
    void slidingAlgorithmsAndResetsGoToTheStoreUnchanged() {
        ManualTicker clock = ManualTicker.atEpochNanos(START);
        RateLimiter shared = InMemoryRateLimiter.builder().ticker(clock).build();
        Limit window = Limit.slidingWindow(100, Duration.ofSeconds(1));
        Limit bucket = Limit.tokenBucket(1_000, Rate.perSecond(1_000));
        try (LeasedRateLimiter node =
                LeasedRateLimiter.builder(shared).ticker(clock).build()) {
            for (int i = 0; i < 50; i++) {
                node.tryAcquire("s", window);
            }
            assertThat(node.storeCalls()).isEqualTo(50);
            for (int i = 0; i < 500; i++) {
                node.tryAcquire("b", bucket);
            }
            assertThat(node.held("b", bucket)).isPositive();
            node.reset("b", bucket);
            assertThat(node.held("b", bucket)).isZero();
            assertThat(shared.peek("b", bucket).remaining()).isEqualTo(1_000);
        }
    }

    @Test
    void aNodeNeverHoldsMoreThanMaxLeaseOfAKeyTakesUnderWayIncluded() throws Exception {
        ManualTicker clock = ManualTicker.atEpochNanos(START); // time stands still: nothing held expires or refills
        InMemoryRateLimiter memory = InMemoryRateLimiter.builder().ticker(clock).build();
        ExecutorService storeThreads = Executors.newFixedThreadPool(2);
        // the store answers takes ahead on its own threads, later, as a remote store does: takes overlap
        RateLimiter shared = new AnsweredElsewhere(memory, storeThreads);
        Limit limit = Limit.tokenBucket(1_000_000, Rate.perSecond(1_000_000));
        long maxLease = 64;
        LeasedRateLimiter node = LeasedRateLimiter.builder(shared)
                .ticker(clock)
                .maxLease(maxLease)
                .build();
        AtomicLong admitted = new AtomicLong();
        AtomicLong mostHeld = new AtomicLong();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (running.get()) {
                mostHeld.accumulateAndGet(node.held("hot", limit), Math::max);
            }
        });
        watcher.start();
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Callable<Void>> tasks = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long cost = 1L + t % 3;
                tasks.add(() -> {
                    go.await();
                    for (int i = 0; i < 20_000; i++) {
                        if (node.tryAcquire("hot", limit, cost).allowed()) {
                            admitted.addAndGet(cost);
                        }
                    }
                    return null;
                });
            }
            List<Future<Void>> done = new ArrayList<>();
            for (Callable<Void> task : tasks) {
                done.add(callers.submit(task));
            }
            go.countDown();
            for (Future<Void> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            callers.shutdown();
            running.set(false);
            watcher.join();
            storeThreads.shutdown();
            assertThat(storeThreads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(node.localDecisions()).as("decided from held permits").isPositive();
        assertThat(mostHeld.get()).as("the most this node held at once").isLessThanOrEqualTo(maxLease);
        // every take has been answered: what the store gave out and this node did not admit was held here (or is
        // lost to it), and no more than maxLease of it
        long givenOut = limit.capacity() - memory.peek("hot", limit).remaining();
        assertThat(givenOut - admitted.get())
                .as("taken from the store and not admitted")
                .isBetween(0L, maxLease);
        node.close();
    }

    /**
     * The take protocol is written once: the same calls through the synchronous and the asynchronous view, each on a
     * fresh node and store, give the same decisions, the same store calls and the same held permits at every step,
     * including fixed windows another node leaves short of a take's extra permits (the take is denied and asked
     * again for the cost alone, counted once in the key's demand).
     */
    @Test
    void bothViewsTakeAlikeIncludingAWindowShortOfTheExtraPermits() {
        Limit window = Limit.fixedWindow(40, Duration.ofSeconds(10));
        Limit bucket = Limit.tokenBucket(64, Rate.perSecond(20));
        List<String> views = new ArrayList<>();
        for (boolean async : new boolean[] {false, true}) {
            ManualTicker clock = ManualTicker.atEpochNanos(START);
            RateLimiter shared = InMemoryRateLimiter.builder().ticker(clock).build();
            StringBuilder log = new StringBuilder();
            try (LeasedRateLimiter node = LeasedRateLimiter.builder(shared)
                    .ticker(clock)
                    .horizon(Duration.ofSeconds(10))
                    .build()) {
                java.util.Random random = new java.util.Random(7);
                for (int i = 0; i < 2_000; i++) {
                    clock.advance(Duration.ofMillis(random.nextInt(20)));
                    Limit limit = random.nextBoolean() ? window : bucket;
                    if (random.nextInt(10) == 0) {
                        Decision unused = shared.tryAcquire("k", limit, 1L + random.nextInt(3)); // another node
                    }
                    long cost = 1L + random.nextInt(2);
                    Decision d =
                            async ? node.tryAcquireAsync("k", limit, cost).join() : node.tryAcquire("k", limit, cost);
                    log.append(i)
                            .append(' ')
                            .append(d)
                            .append(" calls=")
                            .append(node.storeCalls())
                            .append(" held=")
                            .append(node.held("k", limit))
                            .append('\n');
                }
            }
            views.add(log.toString());
        }
        assertThat(views.get(1)).as("the async view").isEqualTo(views.get(0));
    }

    /**
     * Permits of three takes held at once, the take ahead answered after a caller's take that was sent later, are all
     * spendable: none is dropped before it expires. (Before, the oldest few were dropped, and a node under-admitted by
     * more than it held: aNodeNeverHoldsMoreThanMaxLeaseOfAKeyTakesUnderWayIncluded failed about once in 100 runs on a
     * busy machine, 66 permits taken and not admitted, maxLease 64.)
     */
    @Test
    void aTakeAheadAnsweredAfterACallersTakeLosesNoPermit() {
        ManualTicker clock = ManualTicker.atEpochNanos(START); // time stands still: nothing held expires
        InMemoryRateLimiter memory = InMemoryRateLimiter.builder().ticker(clock).build();
        List<Runnable> unanswered = new ArrayList<>();
        Limit limit = Limit.tokenBucket(1_000_000, Rate.perSecond(1_000_000));
        try (LeasedRateLimiter node = LeasedRateLimiter.builder(new AnsweredElsewhere(memory, unanswered::add))
                .ticker(clock)
                .maxLease(64)
                .build()) {
            // every store call is queued until the test answers it: a caller's take (its future is not done) at once,
            // a take ahead (started by a decision made here, whose future is done) when the test says
            long admitted = 0;
            int before;
            do { // takes grow with the demand, until one is taken ahead
                before = unanswered.size();
                assertThat(decide(node, unanswered, limit, 1).allowed()).isTrue();
                admitted++;
            } while (unanswered.size() == before);
            long held = node.held("hot", limit);
            assertThat(held).as("held when the take ahead was sent").isPositive();
            // a caller's take (its cost is more than is held), answered at once, while the take ahead is out
            assertThat(decide(node, unanswered, limit, held + 1).allowed()).isTrue();
            admitted += held + 1;
            assertThat(node.held("hot", limit))
                    .as("held from the caller's take, and what was left")
                    .isGreaterThan(held);
            unanswered.remove(0).run(); // the take ahead is answered now, applied by the next call
            assertThat(decide(node, unanswered, limit, 1).allowed()).isTrue();
            admitted++;
            long givenOut = limit.capacity() - memory.peek("hot", limit).remaining();
            assertThat(node.held("hot", limit))
                    .as("held: every permit taken from the store and not admitted")
                    .isEqualTo(givenOut - admitted);
        }
    }

    /** A call of the hot key; a caller's take it makes (the store call it waits for) is answered at once. */
    private static Decision decide(LeasedRateLimiter node, List<Runnable> unanswered, Limit limit, long cost) {
        CompletableFuture<Decision> f = node.tryAcquireAsync("hot", limit, cost);
        if (!f.isDone()) {
            unanswered.remove(unanswered.size() - 1).run();
        }
        return f.join();
    }

    /** A real in-memory store whose async calls are decided later, on another thread, as a remote store's are. */
    private record AnsweredElsewhere(RateLimiter store, Executor threads) implements RateLimiter {
        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            return store.tryAcquire(key, limit, cost);
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return CompletableFuture.supplyAsync(() -> store.tryAcquire(key, limit, cost), threads);
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            return store.tryAcquire(permits);
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            return store.reserve(key, limit, cost, maxWait);
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            return store.peek(key, limit, cost);
        }

        @Override
        public void reset(String key, Limit limit) {
            store.reset(key, limit);
        }

        @Override
        public void close() {
            store.close();
        }
    }
}
