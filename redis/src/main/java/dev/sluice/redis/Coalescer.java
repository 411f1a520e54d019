package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.store.Batching;
import io.lettuce.core.RedisCommandExecutionException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Many calls per {@code EVALSHA}: the Redis part of the stores' one batching policy ({@link Batching}: a call goes
 * alone at once while fewer than {@link #MAX_IN_FLIGHT} calls of this limiter are at Redis and its key is in none of
 * them; otherwise it queues, and the next answer sends what is queued as one call of {@code batch.lua}, which does
 * each on its own, in arrival order). The calls batched are single-permit decisions and, beside them, estimates,
 * settles and in-flight steps ({@link #submit(byte, ScriptCall, Function)}), each read by its own script's reader.
 * This class says how a batch is sent: one script call per run of calls made at the same instant and, on Redis
 * Cluster, per hash slot (a script's keys must share one); a lone call as its own script.
 *
 * <p>A batch that fails (connection lost, Redis error) fails each call in it as its own call would have failed; a key
 * holding another type fails only the calls on that key. With a client ticker only calls made at the same
 * instant share a script call; on Redis Cluster with keys spread over many slots batches are small and the gain is
 * mostly on hot keys. How the constants were chosen: bench/README.md.
 */
final class Coalescer implements Batching.Sender<Coalescer.Pending<?>> {

    /** The most decisions in one script call (Redis serves nothing else while a script runs). */
    static final int MAX_BATCH = 64;

    /**
     * How many script calls of one limiter may be at Redis at once before decisions queue for a batch: enough to keep
     * the connection busy while a reply travels back (pipelining), few enough that a busy limiter forms batches.
     */
    static final int MAX_IN_FLIGHT = 6;

    /**
     * The most decisions that may wait for a batch; past it a call fails at once ({@link dev.sluice.Degradation#OVERLOADED}).
     * A healthy Redis drains even this many within the default budget; it fills only while Redis does not answer.
     */
    static final int MAX_QUEUED = 100_000;

    /**
     * One call waiting for its script call: a single-permit decision ({@link #DECIDE}) or another operation whose
     * script {@code batch.lua} also runs ({@link #ESTIMATE}, {@link #SETTLE}, {@link #IN_FLIGHT}); {@code call} is
     * its own script call (sent as it is when it goes alone), {@code finish} reads that script's reply. Its key is its
     * first Redis key: the state (the user's key and the limit), or the slots for work in flight.
     */
    record Pending<T>(byte kind, ScriptCall call, Function<List<Object>, T> finish, ScriptRunner.Call<T> result)
            implements Batching.Member {
        @Override
        public Object batchKey() {
            return ByteBuffer.wrap(call.keys[0]);
        }

        @Override
        public boolean isDone() {
            return result.isDone();
        }

        @Override
        public void fail(Throwable error) {
            result.completeExceptionally(error);
        }
    }

    /** The kinds of entry of a batch, as {@code batch.lua} names them. */
    static final byte DECIDE = 'd';

    static final byte ESTIMATE = 'e';
    static final byte SETTLE = 's';
    static final byte IN_FLIGHT = 'i';

    private final Batching<Pending<?>> batching = new Batching<>(MAX_IN_FLIGHT, MAX_BATCH, MAX_QUEUED, this);
    private final ScriptRunner runner;
    private final RedisFailures failures;
    private final boolean cluster;

    Coalescer(ScriptRunner runner, RedisFailures failures, boolean cluster) {
        this.runner = runner;
        this.failures = failures;
        this.cluster = cluster;
    }

    /** Sends a single-permit call at once, or queues it for a batch ({@link Batching}). */
    ScriptRunner.Call<Decision> submit(ScriptCall call) {
        return submit(DECIDE, call, call::single);
    }

    /**
     * Sends another operation's script call ({@code kind}: {@link #ESTIMATE}, {@link #SETTLE}, {@link #IN_FLIGHT})
     * at once, or queues it for a batch, where {@code batch.lua} runs it in arrival order among the decisions;
     * {@code finish} reads its script's reply either way.
     */
    <T> ScriptRunner.Call<T> submit(byte kind, ScriptCall call, Function<List<Object>, T> finish) {
        ScriptRunner.Call<T> result = runner.newCall();
        if (batching.submit(new Pending<>(kind, call, finish, result)) == Batching.Admission.QUEUE_FULL) {
            result.completeExceptionally(failures.overloaded(MAX_QUEUED));
        }
        return result;
    }

    /** Sends nothing more: what is queued, and every later decision, fails with {@code why}. */
    void close(RuntimeException why) {
        batching.close(why);
    }

    /**
     * Sends a batch as one script call per run of calls made at the same instant (the store's clock: all of them) and
     * per hash slot on a cluster, in order; completes when every one of them is answered.
     */
    @Override
    public CompletableFuture<?> send(List<Pending<?>> batch) {
        List<List<Pending<?>>> groups = groups(batch);
        if (groups.size() == 1) {
            return sendGroup(groups.get(0));
        }
        CompletableFuture<?>[] all = new CompletableFuture<?>[groups.size()];
        for (int i = 0; i < all.length; i++) {
            all[i] = sendGroup(groups.get(i));
        }
        return CompletableFuture.allOf(all);
    }

    private List<List<Pending<?>>> groups(List<Pending<?>> batch) {
        if (!cluster && batch.get(0).call.argv[0].length == 0) {
            return List.of(batch); // Redis's own clock (empty time argument for every call): one group, as it is
        }
        List<List<Pending<?>>> runs = new ArrayList<>();
        List<Pending<?>> run = new ArrayList<>();
        for (Pending<?> p : batch) {
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
        List<List<Pending<?>>> bySlot = new ArrayList<>();
        for (List<Pending<?>> r : runs) {
            Map<Integer, List<Pending<?>>> slots = new LinkedHashMap<>();
            for (Pending<?> p : r) {
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
    private CompletableFuture<?> sendGroup(List<Pending<?>> group) {
        if (group.size() == 1) {
            return sendAlone(group.get(0));
        }
        ScriptRunner.Call<List<Object>> sent = runner.run(ScriptBatch.of(group), reply -> reply);
        return sent.whenComplete((reply, e) -> {
            if (e != null) {
                for (Pending<?> p : group) {
                    p.result.completeExceptionally(failures.translate(e, p.call));
                }
                return;
            }
            answer(group, reply);
        });
    }

    /** One call as its own script: the caller's future completes with the command's. */
    private <T> CompletableFuture<?> sendAlone(Pending<T> p) {
        // the caller's future is not the command's: a caller who gives up does not cancel it (cancelling completes
        // Lettuce's future at once, which would count a command still at Redis as answered)
        ScriptRunner.Call<T> wire = runner.run(p.call, p.finish);
        return wire.whenComplete((d, e) -> {
            if (e == null) {
                p.result.complete(d);
            } else {
                p.result.completeExceptionally(e);
            }
        });
    }

    /** Hands each call of a batch its own answer (or its own key's error) from the reply. */
    private void answer(List<Pending<?>> group, List<Object> reply) {
        long nowNanos;
        try {
            nowNanos = ScriptCall.num(reply, 0) * 1000;
        } catch (RuntimeException e) {
            group.forEach(p -> p.result.completeExceptionally(e));
            return;
        }
        for (int i = 0; i < group.size(); i++) {
            answer(group.get(i), reply, 1 + 4 * i, nowNanos);
        }
    }

    /** The future of a {@link #DECIDE} call: its {@code finish} is {@link ScriptCall#single}, a {@link Decision}. */
    @SuppressWarnings("unchecked")
    private static ScriptRunner.Call<Decision> decided(Pending<?> p) {
        return (ScriptRunner.Call<Decision>) p.result;
    }

    /** Hands one call its answer from its four elements of the reply at {@code r} (see {@code batch.lua}). */
    private <T> void answer(Pending<T> p, List<Object> reply, int r, long nowNanos) {
        try {
            long code = ScriptCall.num(reply, r);
            if (p.kind != DECIDE) {
                if (code == 2) { // its own script's reply, read as if it had gone alone
                    runner.complete(p.call, p.result, ScriptCall.list(reply, r + 1), p.finish);
                } else { // the error its own script would have raised
                    String error = new String(ScriptCall.bytes(reply, r + 1), StandardCharsets.UTF_8);
                    p.result.completeExceptionally(
                            failures.translate(new RedisCommandExecutionException(error), p.call));
                }
            } else if (code == -3) {
                // a token bucket value written under other numbers: converted, and decided on its own
                ScriptCall again = p.call.reading(0, ScriptCall.bytes(reply, r + 1), nowNanos / 1000);
                runner.again(again, p.finish, p.result);
            } else if (code == -4) {
                // its key was read under other numbers of its name earlier in the batch: decided on its own
                runner.again(p.call, p.finish, p.result);
            } else if (code < 0) {
                String error = (code == -1 ? "SLUICEWRONGTYPE" : "SLUICECORRUPT") + " 1";
                p.result.completeExceptionally(failures.translate(new RedisCommandExecutionException(error), p.call));
            } else {
                // a decision, read from its four elements where they are (no copy of them as a reply of its own)
                decided(p).complete(p.call.decideAt(reply, r, 0, nowNanos));
            }
        } catch (RuntimeException e) {
            p.result.completeExceptionally(e);
        }
    }
}
