package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.tck.ReferenceRateLimiter;
import dev.sluice.tck.Tck;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Batching: many concurrent decisions, one statement, each decision exactly what it would be alone. */
class BatchingTest {

    /**
     * The test database, its statements counted ({@link #target}); once armed, holds every getConnection until opened,
     * and says when the first one is waiting; unarmed (while the limiter is built: its warm-up borrows a connection)
     * it passes straight through.
     */
    static final class GatedDataSource extends TestDataSource {
        final RoundTripTest.CountingDataSource target = new RoundTripTest.CountingDataSource(TestDatabase.dataSource());
        final CountDownLatch waiting = new CountDownLatch(1);
        final CountDownLatch open = new CountDownLatch(1);
        volatile boolean armed;

        /**
         * Builds {@code b}'s limiter (on this source) with one batch at a time, then arms the gate and starts the
         * count: the next call goes alone and is held, the ones after it queue behind it.
         */
        PostgresRateLimiter arm(PostgresRateLimiter.Builder b) {
            PostgresRateLimiter rl = b.batching(64, 1).build();
            armed = true;
            target.calls.set(0);
            return rl;
        }

        @Override
        public Connection getConnection() throws SQLException {
            if (!armed) {
                return target.getConnection();
            }
            waiting.countDown();
            try {
                open.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return target.getConnection();
        }
    }

    @Test
    void queuedDecisionsTravelAsOneStatementInArrivalOrder() throws Exception {
        GatedDataSource gated = new GatedDataSource();
        RoundTripTest.CountingDataSource counting = gated.target;
        String hot = "batch:" + UUID.randomUUID();
        Limit bucket = Limit.tokenBucket(8, Rate.perHour(1));
        Limit gcra = Limit.gcra(Rate.perHour(1), 3);
        try (PostgresRateLimiter rl = gated.arm(TestDatabase.builder(gated))) {
            CompletableFuture<Decision> first = rl.tryAcquireAsync(hot, bucket, 1);
            assertThat(gated.waiting.await(1, TimeUnit.MINUTES)).isTrue(); // the dispatcher holds the first alone
            List<CompletableFuture<Decision>> rest = new ArrayList<>();
            for (int i = 0; i < 9; i++) {
                rest.add(rl.tryAcquireAsync(hot, bucket, 1)); // queued behind it: one batch
            }
            List<CompletableFuture<Decision>> others = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                others.add(rl.tryAcquireAsync(hot + ":" + i, gcra, 2));
            }
            gated.open.countDown();
            assertThat(first.get(1, TimeUnit.MINUTES).remaining()).isEqualTo(7);
            List<Long> remaining = new ArrayList<>();
            List<Boolean> allowed = new ArrayList<>();
            for (CompletableFuture<Decision> f : rest) {
                Decision d = f.get(1, TimeUnit.MINUTES);
                remaining.add(d.remaining());
                allowed.add(d.allowed());
            }
            // arrival order within the batch: 6, 5, … 0, then one denied with nothing left
            assertThat(remaining).containsExactly(6L, 5L, 4L, 3L, 2L, 1L, 0L, 0L, 0L);
            assertThat(allowed).containsExactly(true, true, true, true, true, true, true, false, false);
            // the database's clock: a token comes back an hour after the first was taken, less the time since
            assertThat(rest.get(8).get().retryAfterNanos())
                    .isBetween(
                            Duration.ofMinutes(59).toNanos(),
                            Duration.ofMinutes(60).toNanos());
            for (CompletableFuture<Decision> f : others) {
                assertThat(f.get(1, TimeUnit.MINUTES).remaining()).isEqualTo(1);
            }
            assertThat(counting.calls.get()).as("14 decisions, 2 statements").isEqualTo(2);
            assertThat(rl.stats().decisions()).isEqualTo(14);
        }
    }

    @Test
    void queuedMultiPermitRequestsShareOneTransactionEachAllOrNothing() throws Exception {
        GatedDataSource gated = new GatedDataSource();
        RoundTripTest.CountingDataSource counting = gated.target;
        String k = "multi-batch:" + UUID.randomUUID();
        Limit a = Limit.tokenBucket(5, Rate.perHour(1));
        Limit b = Limit.fixedWindow(3, Duration.ofHours(1));
        Limit named = Limit.tokenBucket(4, Rate.perHour(1)).named("multi-batch");
        Limit renamed = Limit.tokenBucket(8, Rate.perHour(2)).named("multi-batch"); // its numbers changed
        try (PostgresRateLimiter rl = gated.arm(TestDatabase.builder(gated))) {
            CompletableFuture<PermitDecisions> first =
                    rl.tryAcquireEachAsync(List.of(Permit.of(k + "a", a), Permit.of(k + "b", b)));
            assertThat(gated.waiting.await(1, TimeUnit.MINUTES)).isTrue(); // the dispatcher holds the first alone
            List<CompletableFuture<PermitDecisions>> queued = new ArrayList<>();
            for (int i = 0; i < 3; i++) { // the window has 2 left after the first: allowed, allowed, denied
                queued.add(rl.tryAcquireEachAsync(List.of(Permit.of(k + "a", a), Permit.of(k + "b", b))));
            }
            queued.add(
                    rl.tryAcquireEachAsync(List.of(Permit.of(k + "a", a, 2), Permit.of(k + "c", a)))); // a's last two
            queued.add(rl.tryAcquireEachAsync(
                    List.of(Permit.of(k + "a", a), Permit.of(k + "c", a)))); // denied: c keeps its 4
            queued.add(rl.tryAcquireEachAsync(List.of(Permit.of(k + "d", named), Permit.of(k + "e", a))));
            // d under other numbers of its name: read under them, as its own transaction would find d after the last
            queued.add(rl.tryAcquireEachAsync(List.of(Permit.of(k + "d", renamed), Permit.of(k + "e", a))));
            gated.open.countDown();
            assertThat(first.get(1, TimeUnit.MINUTES).allowed()).isTrue();
            List<Boolean> allowed = new ArrayList<>();
            for (CompletableFuture<PermitDecisions> f : queued) {
                allowed.add(f.get(1, TimeUnit.MINUTES).allowed());
            }
            assertThat(allowed).containsExactly(true, true, false, true, false, true, true);
            PermitDecisions windowFull = queued.get(2).get();
            assertThat(windowFull.permits().get(0).allowed())
                    .as("a's own look: it had 2 left")
                    .isTrue();
            assertThat(windowFull.permits().get(1).allowed()).as("the window's").isFalse();
            // d: one of its 4 taken, carried over to its 8 (what was spent carries over), one more taken
            assertThat(queued.get(6).get().permits().get(0).remaining()).isEqualTo(6);
            // the first alone, then the batch: each a lock statement and a batch of writes per table, and a commit
            assertThat(counting.calls.get()).as("8 requests, 2 transactions").isEqualTo(5 + 5);
            assertThat(rl.stats().decisions()).isEqualTo(8);
            assertThat(rl.tryAcquire(k + "a", a).allowed()).as("a: 5 taken").isFalse();
            assertThat(rl.tryAcquire(k + "b", b).allowed()).as("b: 3 taken").isFalse();
            assertThat(rl.tryAcquire(k + "c", a).remaining())
                    .as("c: 1 taken, 1 now")
                    .isEqualTo(3);
            assertThat(rl.tryAcquire(k + "e", a).remaining())
                    .as("e: 2 taken, 1 now")
                    .isEqualTo(2);
            assertThat(rl.tryAcquire(k + "d", renamed).remaining())
                    .as("d: 2 taken, 1 now")
                    .isEqualTo(5);
        }
    }

    /**
     * Random batches of multi-permit requests (every algorithm, a named limit under two sets of numbers, rows shared
     * between requests), each decided as the reference model decides the same requests one by one, in order.
     */
    @Test
    void aBatchDecidesItsRequestsAsTheReferenceDoesOneByOne() throws Exception {
        List<Limit> limits = List.of(
                Limit.tokenBucket(10, Rate.perSecond(3)),
                Limit.gcra(Rate.of(7, Duration.ofSeconds(2)), 4),
                Limit.fixedWindow(5, Duration.ofMillis(250)),
                Limit.slidingWindow(8, Duration.ofMillis(1300)),
                Limit.slidingLog(6, Duration.ofMillis(700)),
                Limit.tokenBucket(6, Rate.perSecond(2)).named("multi-batch-random"),
                Limit.tokenBucket(9, Rate.perSecond(5)).named("multi-batch-random"));
        long seed = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        ManualTicker t = Tck.ticker();
        String base = "multi-batch-random:" + UUID.randomUUID();
        String[] keys = {base + ":a", base + ":b", base + ":c"};
        try (RateLimiter oracle = new ReferenceRateLimiter(t)) {
            for (int round = 0; round < 6; round++) {
                t.advanceNanos(random.nextLong(0, 600_000_000L));
                GatedDataSource gated = new GatedDataSource();
                try (PostgresRateLimiter rl =
                        gated.arm(TestDatabase.builder(gated).ticker(t))) {
                    List<List<Permit>> requests = new ArrayList<>();
                    List<CompletableFuture<PermitDecisions>> answers = new ArrayList<>();
                    for (int i = 0; i < 24; i++) {
                        List<Permit> permits = new ArrayList<>();
                        for (int j = 0; j < 2 + random.nextInt(2); j++) {
                            Limit l = limits.get(random.nextInt(limits.size()));
                            permits.add(Permit.of(
                                    keys[random.nextInt(keys.length)], l, random.nextLong(1, l.capacity() + 1)));
                        }
                        requests.add(permits);
                        answers.add(rl.tryAcquireEachAsync(permits));
                        if (i == 0) { // the first goes alone and is held: the others queue, one batch
                            assertThat(gated.waiting.await(1, TimeUnit.MINUTES)).isTrue();
                        }
                    }
                    gated.open.countDown();
                    for (int i = 0; i < requests.size(); i++) {
                        assertThat(answers.get(i).get(1, TimeUnit.MINUTES))
                                .as("seed %d, round %d, request %d: %s", seed, round, i, requests.get(i))
                                .isEqualTo(oracle.tryAcquireEach(requests.get(i)));
                    }
                    assertThat(rl.stats().decisions()).isEqualTo(24);
                }
            }
        }
    }
}
