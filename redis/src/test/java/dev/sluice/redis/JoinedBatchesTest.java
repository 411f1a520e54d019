package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import dev.sluice.tck.Tck;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Estimates, settles and in-flight steps join the batches of decisions ({@link Coalescer}): on a Redis of its own,
 * paused (SIGSTOP) while the calls are made, so that the first {@link Coalescer#MAX_IN_FLIGHT} go alone and the rest
 * queue and travel together in {@code batch.lua} calls. Every answer is compared with the same call made alone, in
 * the same order, on a limiter without batching (its own key prefix, the same ticker): a batch does each call exactly
 * as its own script would have.
 */
class JoinedBatchesTest {

    private static final Duration WITHIN = Duration.ofMinutes(5);
    private static final Duration LEASE = Duration.ofSeconds(30);

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

    private static RedisRateLimiter.Builder limiter(ManualTicker t, String prefix) {
        return RedisRateLimiter.builder(server.uri())
                .cluster(false)
                .ticker(t)
                .keyPrefix(prefix)
                .timeBudget(Duration.ofSeconds(30));
    }

    private static long evalshaCalls() {
        return RedisRateLimiterTest.calls(admin.sync().info("commandstats"), "evalsha");
    }

    /** One call, made on either limiter: asynchronously on the batched one, synchronously on the reference. */
    private interface Op extends Function<RateLimiter, CompletableFuture<?>> {}

    /** Makes {@code ops} on {@code batched} while Redis is paused (so that they queue), and each answer. */
    private static List<Object> whilePaused(RateLimiter batched, List<Op> ops) {
        List<CompletableFuture<?>> futures = new ArrayList<>();
        server.pause();
        try {
            for (Op op : ops) {
                futures.add(op.apply(batched));
            }
        } finally {
            server.resume();
        }
        List<Object> answers = new ArrayList<>();
        for (CompletableFuture<?> f : futures) {
            answers.add(answer(f));
        }
        return answers;
    }

    /** The same calls one after the other on {@code alone}, each waited for before the next. */
    private static List<Object> oneByOne(RateLimiter alone, List<Op> ops) {
        List<Object> answers = new ArrayList<>();
        for (Op op : ops) {
            answers.add(answer(op.apply(alone)));
        }
        return answers;
    }

    /**
     * The answer, or the failure as its kind and message, without the limiter's key prefix and the script's name and
     * line that Redis appends to an error (the only parts that differ between a batch and a call alone).
     */
    private static Object answer(CompletableFuture<?> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            return e.getCause() instanceof RedisStoreException r
                    ? r.degradation() + ": "
                            + r.getMessage()
                                    .replaceAll("'(alone|batched):", "'")
                                    .replaceAll(" script: .*", "")
                    : e.getCause().toString();
        }
    }

    private static Op decide(String key, Limit l, long cost) {
        return rl -> rl.tryAcquireAsync(key, l, cost);
    }

    private static Op estimate(String key, Limit l, long estimate, String id) {
        return rl -> rl.tryAcquireEstimateAsync(key, l, estimate, id, WITHIN);
    }

    private static Op settle(String key, Limit l, String id, long actual) {
        return rl -> rl.settleAsync(key, l, id, actual);
    }

    private static Op acquire(String key, long max, String holder) {
        return rl -> rl.inFlight().tryAcquireAsync(key, max, holder, LEASE);
    }

    private static Op release(String key, String holder) {
        return rl -> rl.inFlight().releaseAsync(key, holder);
    }

    private static Op renew(String key, String holder) {
        return rl -> rl.inFlight().renewAsync(key, holder, LEASE);
    }

    /**
     * Many estimates, settles, slot steps and decisions, over a few keys, in one process: far fewer script calls than
     * calls, and each key admits exactly its bound, settles each reservation once and holds at most its slots.
     */
    @Test
    void estimatesSettlesAndSlotStepsTravelInTheBatchesOfDecisions() {
        ManualTicker t = Tck.ticker();
        Limit bucket = Limit.tokenBucket(100, Rate.perHour(1));
        Limit window = Limit.fixedWindow(40, Duration.ofMinutes(1));
        int keys = 8;
        int rounds = 60;
        int slots = 3;
        List<Op> ops = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < keys; k++) {
                String key = "k" + k;
                Limit l = k % 2 == 0 ? bucket : window;
                ops.add(estimate(key, l, 3, "r" + r)); // 3 taken on an estimate,
                ops.add(decide(key, l, 1));
                ops.add(acquire(key, slots, "h" + r));
                ops.add(settle(key, l, "r" + r, 1)); // 2 of them given back (while the window's reservation's)
                ops.add(renew(key, "h" + (r - 1)));
                ops.add(release(key, "h" + (r - 2)));
            }
        }
        try (RedisRateLimiter batched = limiter(t, "batched:").build();
                RedisRateLimiter alone = limiter(t, "alone:").batching(false).build()) {
            admin.sync().configResetstat();
            List<Object> got = whilePaused(batched, ops);
            long calls = evalshaCalls();
            List<Object> expected = oneByOne(alone, ops);
            for (int i = 0; i < ops.size(); i++) {
                assertThat(got.get(i)).as("call %d", i).isEqualTo(expected.get(i));
            }
            assertThat(calls)
                    .as("script calls for %d calls", ops.size())
                    .isGreaterThanOrEqualTo(ops.size() / Coalescer.MAX_BATCH)
                    .isLessThanOrEqualTo(Coalescer.MAX_IN_FLIGHT + ops.size() / 16);

            // exact bounds: per key, every estimate, decision and settle counted
            for (int k = 0; k < keys; k++) {
                long estimates = 0;
                long settled = 0;
                long decided = 0;
                long held = 0;
                for (int r = 0; r < rounds; r++) {
                    int at = 6 * (r * keys + k);
                    estimates += ((Decision) got.get(at)).allowed() ? 1 : 0;
                    decided += ((Decision) got.get(at + 1)).allowed() ? 1 : 0;
                    Decision slot = (Decision) got.get(at + 2);
                    held += slot.allowed() ? 1 : 0;
                    // held after: this round's, the last round's (renewed) and the one before's (released after)
                    assertThat(slot.remaining()).isEqualTo(Math.max(0, slots - (r + 1)));
                    Settlement s = (Settlement) got.get(at + 3);
                    settled += s.settled() ? 1 : 0;
                    assertThat(s.settled()).isEqualTo(((Decision) got.get(at)).allowed());
                }
                // each allowed estimate is settled at 1: it spends 1, as a decision does; a key admits its capacity
                long capacity = k % 2 == 0 ? 100 : 40;
                assertThat(estimates).as("key %d", k).isEqualTo(settled);
                assertThat(estimates + decided).as("key %d", k).isEqualTo(capacity);
                // a holder's slot is released two rounds later: each round from the third takes one slot of three
                assertThat(held).as("key %d", k).isEqualTo(rounds);
            }
        }
    }

    /**
     * One key's queued calls in one batch, where arrival order decides every answer: an estimate, decisions (two in a
     * row, so the batch keeps a working copy of the key), a settle that gives back before the next decision, the same
     * reservation id again once settled, and slot steps on the same user key.
     */
    @Test
    void anEstimateASettleADecisionAndASlotStepOnOneKeyAreDoneInArrivalOrder() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        String key = "one";
        List<Op> first = new ArrayList<>();
        first.add(decide(key, l, 1)); // alone: the key's calls below wait for it
        for (int i = 1; i < Coalescer.MAX_IN_FLIGHT; i++) {
            first.add(decide("other" + i, l, 1)); // alone too: what follows queues
        }
        List<Op> queued = List.of(
                decide(key, l, 1), // 8 left
                decide(key, l, 1), // 7 left
                estimate(key, l, 6, "a"), // 1 left
                decide(key, l, 2), // denied: 1 left
                settle(key, l, "a", 1), // 5 given back: 6 left
                decide(key, l, 4), // 2 left
                estimate(key, l, 2, "a"), // "a" is free again: 0 left
                settle(key, l, "b", 1), // never reserved
                acquire(key, 1, "h1"),
                acquire(key, 1, "h2"), // denied: h1 holds the one slot
                release(key, "h1"),
                acquire(key, 1, "h2"),
                decide(key, l, 1), // denied: 0 left
                settle(key, l, "a", 0)); // 2 given back
        List<Op> ops = new ArrayList<>(first);
        ops.addAll(queued);
        try (RedisRateLimiter batched = limiter(t, "batched:").build();
                RedisRateLimiter alone = limiter(t, "alone:").batching(false).build()) {
            admin.sync().configResetstat();
            List<Object> got = whilePaused(batched, ops);
            assertThat(evalshaCalls())
                    .as("the first calls alone, then every queued call in one batch")
                    .isEqualTo(Coalescer.MAX_IN_FLIGHT + 1);
            List<Object> answers = got.subList(first.size(), got.size());
            assertThat(answers.stream().map(JoinedBatchesTest::brief).toList())
                    .containsExactly(
                            "allowed 8",
                            "allowed 7",
                            "allowed 1",
                            "denied 1",
                            "settled 6 -5 6",
                            "allowed 2",
                            "allowed 0",
                            "not pending",
                            "allowed 0",
                            "denied 0",
                            "true",
                            "allowed 0",
                            "denied 0",
                            "settled 2 -2 2");
            assertThat(got).isEqualTo(oneByOne(alone, ops));
        }
    }

    private static String brief(Object answer) {
        if (answer instanceof Decision d) {
            return (d.allowed() ? "allowed " : "denied ") + d.remaining();
        }
        if (answer instanceof Settlement s) {
            return s.settled() ? "settled " + s.estimate() + " " + s.adjusted() + " " + s.remaining() : "not pending";
        }
        return String.valueOf(answer);
    }

    /**
     * A key holding another Redis type fails only its own entries of a batch, with the error its own call would have
     * given: a pending record's key, an in-flight key.
     */
    @Test
    void aKeyOfAnotherTypeFailsOnlyItsOwnEntries() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.slidingWindow(5, Duration.ofMinutes(1));
        List<Op> ops = new ArrayList<>();
        for (int i = 0; i < Coalescer.MAX_IN_FLIGHT; i++) {
            ops.add(decide("first" + i, l, 1)); // these go alone
        }
        for (int i = 0; i < 3; i++) {
            ops.add(estimate("bad", l, 1, "taken")); // its record's key is a list
            ops.add(estimate("good", l, 1, "r" + i));
            ops.add(acquire("badslots", 2, "h" + i)); // its slots' key is a string
            ops.add(acquire("good", 2, "h" + i));
            ops.add(settle("good", l, "r" + i, 2));
        }
        try (RedisRateLimiter batched = limiter(t, "batched:").build();
                RedisRateLimiter alone = limiter(t, "alone:").batching(false).build()) {
            for (String prefix : List.of("batched:", "alone:")) {
                admin.sync().rpush(RedisKeys.pending(prefix, "bad", l, "taken"), bytes("x"));
                admin.sync().set(RedisKeys.inFlight(prefix, "badslots"), bytes("x"));
            }
            admin.sync().configResetstat();
            List<Object> got = whilePaused(batched, ops);
            assertThat(evalshaCalls()).isLessThan(ops.size());
            assertThat(got).isEqualTo(oneByOne(alone, ops));
            for (int i = 0; i < 3; i++) {
                int at = Coalescer.MAX_IN_FLIGHT + 5 * i;
                assertThat(String.valueOf(got.get(at)))
                        .startsWith(Degradation.STORE_ERROR + ": ")
                        .contains("WRONGTYPE")
                        .contains("pending reservation of key 'bad'");
                assertThat(String.valueOf(got.get(at + 2)))
                        .startsWith(Degradation.STORE_ERROR + ": ")
                        .contains("WRONGTYPE");
                assertThat(brief(got.get(at + 1))).isEqualTo("allowed " + (4 - 2 * i));
                assertThat(brief(got.get(at + 3))).isEqualTo(i < 2 ? "allowed " + (1 - i) : "denied 0");
                assertThat(brief(got.get(at + 4))).isEqualTo("settled 1 1 " + Math.max(0, 3 - 2 * i));
            }
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
