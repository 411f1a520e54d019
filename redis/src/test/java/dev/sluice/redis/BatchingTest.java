package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.tck.Tck;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Many decisions per {@code EVALSHA}: on a Redis of its own, paused (SIGSTOP) while calls are made, so that which
 * calls are in flight and which queue is known exactly: the first {@link Coalescer#MAX_IN_FLIGHT} on distinct keys are
 * sent alone, the rest wait and go as batches of up to {@link Coalescer#MAX_BATCH} when Redis answers, a key in one
 * call at Redis at a time.
 */
class BatchingTest {

    private static RedisServer server;
    private static RedisServer.Raw admin;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        admin = server.raw();
    }

    @AfterAll
    static void stop() {
        admin.close();
        server.close();
    }

    private static RedisRateLimiter.Builder limiter(ManualTicker t) {
        return RedisRateLimiter.builder(server.uri()).cluster(false).ticker(t).timeBudget(Duration.ofSeconds(30));
    }

    private static long evalshaCalls() {
        Matcher m = Pattern.compile("cmdstat_evalsha:calls=(\\d+)")
                .matcher(new String(
                        admin.sync().info("commandstats").getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** Makes {@code calls} while Redis is paused, so that what they send queues behind the calls already in flight. */
    private static void whilePaused(Runnable calls) {
        server.pause();
        try {
            calls.run();
        } finally {
            server.resume();
        }
    }

    @Test
    void queuedDecisionsGoAsBatchesDecidedExactlyAndInArrivalOrder() {
        ManualTicker t = Tck.ticker();
        Limit hot = Limit.tokenBucket(500, Rate.perHour(1));
        Limit perUser = Limit.fixedWindow(3, Duration.ofMinutes(1));
        int calls = 2_000;
        try (RedisRateLimiter rl = limiter(t).build()) {
            admin.sync().configResetstat();
            List<CompletableFuture<Decision>> hotCalls = new ArrayList<>();
            List<CompletableFuture<Decision>> userCalls = new ArrayList<>();
            whilePaused(() -> {
                for (int i = 0; i < calls / 2; i++) {
                    hotCalls.add(rl.tryAcquireAsync("hot", hot, 1));
                    userCalls.add(rl.tryAcquireAsync("user:" + (i % 100), perUser, 1));
                }
            });
            // the hot key admits exactly its 500 permits, to the first 500 callers in the order they called
            for (int i = 0; i < hotCalls.size(); i++) {
                assertThat(hotCalls.get(i).join().allowed())
                        .as("hot call %d", i)
                        .isEqualTo(i < 500);
            }
            // 100 keys of 3 permits: each key's first 3 calls (calls i, i+100, i+200) admitted, the rest denied
            for (int i = 0; i < userCalls.size(); i++) {
                Decision d = userCalls.get(i).join();
                assertThat(d.allowed()).as("user call %d", i).isEqualTo(i < 300);
                assertThat(d.remaining()).isEqualTo(i < 300 ? 2 - i / 100 : 0);
            }
            // 6 calls alone (one on the hot key, which then waits for it), then the queued ones in batches: full ones
            // at first, smaller ones while the hot key's decisions wait for its call at Redis
            assertThat(evalshaCalls())
                    .isGreaterThanOrEqualTo(
                            Coalescer.MAX_IN_FLIGHT + (calls - Coalescer.MAX_IN_FLIGHT) / Coalescer.MAX_BATCH)
                    .isLessThanOrEqualTo(calls / 16);
        }
    }

    /**
     * A rollout inside one process: queued decisions on one key under two sets of numbers of one named limit. A batch
     * reads the key under the first decision's numbers; a decision under the other numbers (and a token bucket value
     * written under other numbers, which the client converts) is decided again on its own (one more script call each,
     * the price of alternating numbers on one key). Whatever the order, what was spent carries over: both limits hold
     * 10, 4 were spent, so exactly 6 more are admitted.
     */
    @Test
    void queuedDecisionsUnderTwoSetsOfNumbersOfOneNameSpendOneState() {
        ManualTicker t = Tck.ticker();
        List<List<Limit>> pairs = List.of(
                List.of(
                        Limit.tokenBucket(10, Rate.perSecond(10)).named("roll-tb"),
                        Limit.tokenBucket(10, Rate.perSecond(5)).named("roll-tb")),
                List.of(
                        Limit.fixedWindow(10, Duration.ofMinutes(1)).named("roll-fw"),
                        Limit.fixedWindow(10, Duration.ofMinutes(2)).named("roll-fw")),
                List.of(
                        Limit.slidingLog(10, Duration.ofMinutes(1)).named("roll-sl"),
                        Limit.slidingLog(10, Duration.ofMinutes(2)).named("roll-sl")));
        try (RedisRateLimiter rl = limiter(t).build()) {
            for (List<Limit> pair : pairs) {
                String key = "rollout:" + pair.get(0).name();
                for (int i = 0; i < 4; i++) {
                    assertThat(rl.tryAcquire(key, pair.get(0)).allowed()).isTrue();
                }
                List<CompletableFuture<Decision>> calls = new ArrayList<>();
                whilePaused(() -> {
                    for (int i = 0; i < 200; i++) {
                        calls.add(rl.tryAcquireAsync(key, pair.get(i % 2), 1));
                    }
                });
                long allowed = calls.stream().filter(f -> f.join().allowed()).count();
                assertThat(allowed).as("%s", pair).isEqualTo(6);
                assertThat(rl.peek(key, pair.get(1), 1).allowed()).isFalse();
            }
        }
    }

    /**
     * The decisions of one process on one key never race each other at Redis: while a call on the hot key is out, its
     * next decisions wait (though fewer than MAX_IN_FLIGHT calls are out) and go together in the next call.
     */
    @Test
    void aKeyIsInOneCallAtRedisAtATime() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(30, Rate.perHour(1));
        try (RedisRateLimiter rl = limiter(t).build()) {
            admin.sync().configResetstat();
            List<CompletableFuture<Decision>> all = new ArrayList<>();
            whilePaused(() -> {
                for (int i = 0; i < 50; i++) {
                    all.add(rl.tryAcquireAsync("hot", l, 1));
                }
            });
            for (int i = 0; i < all.size(); i++) {
                assertThat(all.get(i).join().allowed()).as("call %d", i).isEqualTo(i < 30);
            }
            assertThat(evalshaCalls())
                    .as("one call alone, then the 49 that waited for it as one batch")
                    .isEqualTo(2);
        }
    }

    /** A batch sends each distinct set of fields once; 64 limits in one batch, each decision still under its own. */
    @Test
    void aBatchOfManyLimitsDecidesEachUnderItsOwn() {
        ManualTicker t = Tck.ticker();
        try (RedisRateLimiter rl = limiter(t).build()) {
            admin.sync().configResetstat();
            List<CompletableFuture<Decision>> first = new ArrayList<>();
            List<CompletableFuture<Decision>> queued = new ArrayList<>();
            whilePaused(() -> {
                for (int i = 0; i < Coalescer.MAX_IN_FLIGHT; i++) {
                    first.add(rl.tryAcquireAsync("alone" + i, Limit.fixedWindow(1, Duration.ofMinutes(1)), 1));
                }
                for (int round = 0; round < 2; round++) {
                    for (int k = 0; k < Coalescer.MAX_BATCH; k++) {
                        // 64 limits, so 64 sets of fields in each batch: fixed windows and token buckets of k + 1
                        Limit l = k % 2 == 0
                                ? Limit.fixedWindow(k + 1, Duration.ofMinutes(1 + k))
                                : Limit.tokenBucket(k + 1, Rate.perHour(1));
                        queued.add(rl.tryAcquireAsync("many" + k, l, 1));
                    }
                }
            });
            first.forEach(f -> assertThat(f.join().allowed()).isTrue());
            for (int i = 0; i < queued.size(); i++) {
                int k = i % Coalescer.MAX_BATCH;
                boolean second = i >= Coalescer.MAX_BATCH;
                Decision d = queued.get(i).join();
                assertThat(d.allowed()).as("call %d", i).isEqualTo(!second || k >= 1);
                assertThat(d.limit()).as("call %d", i).isEqualTo(k + 1);
                assertThat(d.remaining()).as("call %d", i).isEqualTo(second ? Math.max(0, k - 1) : k);
            }
            assertThat(evalshaCalls()).isEqualTo(Coalescer.MAX_IN_FLIGHT + 2);
        }
    }

    @Test
    void withoutBatchingEveryDecisionIsItsOwnEvalsha() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.gcra(Rate.perSecond(5), 10);
        try (RedisRateLimiter rl = limiter(t).batching(false).build()) {
            admin.sync().configResetstat();
            List<CompletableFuture<Decision>> all = new ArrayList<>();
            whilePaused(() -> {
                for (int i = 0; i < 200; i++) {
                    all.add(rl.tryAcquireAsync("k" + (i % 7), l, 1));
                }
            });
            assertThat(all.stream().filter(f -> f.join().allowed()).count()).isEqualTo(70);
            assertThat(evalshaCalls()).isEqualTo(200);
        }
    }

    @Test
    void aKeyOfAnotherTypeFailsOnlyItsOwnDecisionsInABatch() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.slidingLog(2, Duration.ofSeconds(10));
        try (RedisRateLimiter rl = limiter(t).build()) {
            admin.sync().set(RedisKeys.of("sluice:", "bad", l), "x".getBytes(StandardCharsets.UTF_8));
            List<CompletableFuture<Decision>> good = new ArrayList<>();
            List<CompletableFuture<Decision>> bad = new ArrayList<>();
            whilePaused(() -> {
                for (int i = 0; i < Coalescer.MAX_IN_FLIGHT; i++) {
                    good.add(rl.tryAcquireAsync("first" + i, l, 1)); // these go alone
                }
                for (int i = 0; i < 10; i++) {
                    good.add(rl.tryAcquireAsync("good", l, 1));
                    bad.add(rl.tryAcquireAsync("bad", l, 1));
                }
            });
            for (CompletableFuture<Decision> f : bad) {
                assertThat(f)
                        .failsWithin(Duration.ofSeconds(10))
                        .withThrowableOfType(Exception.class)
                        .havingRootCause()
                        .isInstanceOf(io.lettuce.core.RedisCommandExecutionException.class);
                RedisStoreException e = (RedisStoreException) unwrap(f);
                assertThat(e.degradation()).isEqualTo(Degradation.STORE_ERROR);
                assertThat(e.getMessage()).contains("WRONGTYPE").contains("key 'bad'");
            }
            List<Boolean> verdicts = good.subList(Coalescer.MAX_IN_FLIGHT, good.size()).stream()
                    .map(f -> f.join().allowed())
                    .toList();
            assertThat(verdicts).containsExactly(true, true, false, false, false, false, false, false, false, false);
            assertThat(admin.sync().get(RedisKeys.of("sluice:", "bad", l)))
                    .isEqualTo("x".getBytes(StandardCharsets.UTF_8));
        }
    }

    @Test
    void aDecisionWhoseBudgetRunsOutWhileQueuedIsNeverSent() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(100, Rate.perHour(1));
        try (RedisRateLimiter rl = limiter(t).timeBudget(Duration.ofMillis(100)).build()) {
            List<CompletableFuture<Decision>> all = new ArrayList<>();
            whilePaused(() -> {
                for (int i = 0; i < 50; i++) {
                    all.add(rl.tryAcquireAsync("expiring", l, 1));
                }
                for (CompletableFuture<Decision> f : all) {
                    assertThat(f).failsWithin(Duration.ofSeconds(10));
                    assertThat(((RedisStoreException) unwrap(f)).degradation()).isEqualTo(Degradation.TIMEOUT);
                }
            });
            // the call already at Redis when it froze (one: the key's others waited for it) was applied when it
            // resumed; the queued ones never went
            Decision after = rl.tryAcquire("expiring", l);
            assertThat(after.remaining()).isEqualTo(100 - 1 - 1);
        }
    }

    private static Throwable unwrap(CompletableFuture<?> f) {
        try {
            f.join();
            throw new AssertionError("expected a failure");
        } catch (CompletionException e) {
            return e.getCause();
        }
    }
}
