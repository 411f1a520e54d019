package dev.sluice.redis;

import dev.sluice.Decision;
import io.lettuce.core.RedisCommandExecutionException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Many decisions per {@code EVALSHA}: the single-permit calls that concurrent callers make on one limiter while
 * earlier ones are still at Redis are queued, and each time Redis answers, what is queued (up to {@link #MAX_BATCH})
 * goes as one call of {@code batch.lua}, which decides each on its own, in arrival order. Nothing waits for a batch to
 * fill: while fewer than {@link #MAX_IN_FLIGHT} calls of this limiter are at Redis a call is sent at once (alone, it is
 * the plain single-permit script, exactly as without batching), so batches only form under concurrency, and then
 * Redis runs one script for dozens of decisions instead of one each.
 *
 * <p>Each decision keeps its own time budget: one whose budget runs out while queued fails with its timeout and is
 * never sent; a batch that fails (connection lost, Redis error) fails each decision in it as its own call would have
 * failed; a key holding another type fails only the decisions on that key. With a client ticker only calls made at the
 * same instant share a batch; on Redis Cluster a batch is one hash slot (a script's keys must share one), so with
 * keys spread over many slots batches are small and the gain is mostly on hot keys.
 */
final class Coalescer {

    /**
     * The most decisions in one script call. A batch runs on Redis as one script (Redis serves nothing else
     * meanwhile): 64 token-bucket decisions take about 0.1 ms there.
     */
    static final int MAX_BATCH = 64;

    /**
     * How many script calls of one limiter may be at Redis at once before calls queue for a batch: enough to keep the
     * connection busy while a reply travels back (pipelining), few enough that a busy limiter forms batches.
     * Measured (RedisLoadBenchmark, 100,000 keys, 50 in flight, two interleaved rounds): 4 gave 145k and 153k
     * decisions/s, 6 gave 167k and 162k, 8 gave 165k and 161k; one hot key the same within noise.
     */
    static final int MAX_IN_FLIGHT = 6;

    /**
     * The most calls that may wait for a batch; past it a call fails at once ({@link dev.sluice.Degradation#OVERLOADED}).
     * A healthy Redis drains even this many within the default budget; it fills only while Redis does not answer.
     */
    static final int MAX_QUEUED = 100_000;

    /** One decision waiting for its script call. */
    private record Pending(ScriptCall call, ScriptRunner.Call<Decision> result) {}

    private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Calls in {@link #queue}: bounded, so that callers who keep calling while Redis is frozen cannot fill the heap. */
    private final AtomicInteger queued = new AtomicInteger();

    private final ScriptRunner runner;
    private final RedisFailures failures;
    private final boolean cluster;

    Coalescer(ScriptRunner runner, RedisFailures failures, boolean cluster) {
        this.runner = runner;
        this.failures = failures;
        this.cluster = cluster;
    }

    /** Queues a single-permit call; it is sent at once unless {@link #MAX_IN_FLIGHT} calls are already at Redis. */
    ScriptRunner.Call<Decision> submit(ScriptCall call) {
        ScriptRunner.Call<Decision> result = runner.newCall();
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            result.completeExceptionally(failures.overloaded(MAX_QUEUED));
            return result;
        }
        queue.add(new Pending(call, result));
        drain();
        return result;
    }

    /**
     * Sends what is queued while fewer than {@link #MAX_IN_FLIGHT} calls are at Redis. A caller queues, then looks at
     * the count; an answer lowers the count, then looks at the queue: so one of them always sends what is queued.
     */
    private void drain() {
        while (!queue.isEmpty()) {
            int f = inFlight.get();
            if (f >= MAX_IN_FLIGHT) {
                return;
            }
            if (!inFlight.compareAndSet(f, f + 1)) {
                continue;
            }
            List<Pending> batch = take();
            CompletableFuture<?> sent = batch.isEmpty() ? null : send(batch);
            if (sent == null || sent.isDone()) {
                inFlight.decrementAndGet(); // answered at once (a failure to send): go on here, not in a nested drain
            } else {
                CompletableFuture<?> unused = sent.whenComplete((v, e) -> {
                    inFlight.decrementAndGet();
                    drain();
                });
            }
        }
    }

    /** Up to {@link #MAX_BATCH} queued calls, leaving out those whose caller already gave up (never sent). */
    private List<Pending> take() {
        List<Pending> batch = new ArrayList<>();
        Pending p;
        while (batch.size() < MAX_BATCH && (p = queue.poll()) != null) {
            queued.decrementAndGet();
            if (!p.result.isDone()) {
                batch.add(p);
            }
        }
        return batch;
    }

    /**
     * Sends a batch as one script call per run of calls made at the same instant (the store's clock: all of them) and
     * per hash slot on a cluster, in order; completes when every one of them is answered.
     */
    private CompletableFuture<?> send(List<Pending> batch) {
        List<List<Pending>> groups = groups(batch);
        if (groups.size() == 1) {
            return sendGroup(groups.get(0));
        }
        CompletableFuture<?>[] all = new CompletableFuture<?>[groups.size()];
        for (int i = 0; i < all.length; i++) {
            all[i] = sendGroup(groups.get(i));
        }
        return CompletableFuture.allOf(all);
    }

    private List<List<Pending>> groups(List<Pending> batch) {
        if (!cluster && batch.get(0).call.argv[0].length == 0) {
            return List.of(batch); // Redis's own clock (empty time argument for every call): one group, as it is
        }
        List<List<Pending>> runs = new ArrayList<>();
        List<Pending> run = new ArrayList<>();
        for (Pending p : batch) {
            if (!run.isEmpty() && !Arrays.equals(run.get(0).call.argv[0], p.call.argv[0])) {
                runs.add(run);
                run = new ArrayList<>();
            }
            run.add(p);
        }
        runs.add(run);
        if (!cluster) {
            return runs;
        }
        List<List<Pending>> bySlot = new ArrayList<>();
        for (List<Pending> r : runs) {
            Map<Integer, List<Pending>> slots = new LinkedHashMap<>();
            for (Pending p : r) {
                slots.computeIfAbsent(p.call.slot(), s -> new ArrayList<>()).add(p);
            }
            bySlot.addAll(slots.values());
        }
        return bySlot;
    }

    /**
     * One script call: the plain single-permit script for one call, {@code batch.lua} for several. The future it
     * returns is the call's at Redis (complete when Redis answers or the connection fails), not the callers' (whose
     * budgets may run out first): what is at Redis is what {@link #MAX_IN_FLIGHT} counts.
     */
    private CompletableFuture<?> sendGroup(List<Pending> group) {
        if (group.size() == 1) {
            Pending p = group.get(0);
            // the caller's future is not the command's: a caller who gives up does not cancel it (cancelling completes
            // Lettuce's future at once, which would count a command still at Redis as answered)
            ScriptRunner.Call<Decision> wire = runner.run(p.call, p.call::single);
            return wire.whenComplete((d, e) -> {
                if (e == null) {
                    p.result.complete(d);
                } else {
                    p.result.completeExceptionally(e);
                }
            });
        }
        List<ScriptCall> calls = new ArrayList<>(group.size());
        for (Pending p : group) {
            calls.add(p.call);
        }
        ScriptRunner.Call<List<Object>> sent = runner.run(ScriptCall.batch(calls), reply -> reply);
        return sent.whenComplete((reply, e) -> {
            if (e != null) {
                for (Pending p : group) {
                    p.result.completeExceptionally(failures.translate(e, p.call));
                }
                return;
            }
            answer(group, reply);
        });
    }

    /** Hands each call of a batch its own decision (or its own key's error) from the reply. */
    private void answer(List<Pending> group, List<Object> reply) {
        long nowNanos;
        try {
            nowNanos = ScriptCall.num(reply, 0) * 1000;
        } catch (RuntimeException e) {
            group.forEach(p -> p.result.completeExceptionally(e));
            return;
        }
        for (int i = 0; i < group.size(); i++) {
            Pending p = group.get(i);
            int r = 1 + 4 * i;
            try {
                long code = ScriptCall.num(reply, r);
                if (code < 0) {
                    String error = (code == -1 ? "SLUICEWRONGTYPE" : "SLUICECORRUPT") + " 1";
                    p.result.completeExceptionally(
                            failures.translate(new RedisCommandExecutionException(error), p.call));
                } else {
                    p.result.complete(p.call.decideAt(reply, r, 0, nowNanos));
                }
            } catch (RuntimeException e) {
                p.result.completeExceptionally(e);
            }
        }
    }
}
