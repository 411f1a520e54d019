package dev.sluice.redis;

import dev.sluice.Degradation;
import dev.sluice.store.TimeBudget;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisKeyAsyncCommands;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Runs the limiter's Lua scripts: {@code SCRIPT LOAD} at start, then one {@code EVALSHA} per call (an {@code EVAL}
 * of the same text after a {@code NOSCRIPT}, within the call's budget), each call one future with one deadline
 * ({@link TimeBudget}) that a synchronous caller waits on ({@link #await}) or an async one gets failed at
 * ({@link #withDeadline}). Keys and arguments go as {@code KEYS} and {@code ARGV}, never in the script text.
 */
final class ScriptRunner {
    private final RedisScriptingAsyncCommands<byte[], byte[]> scripting;
    private final TimeBudget budget;
    private final RedisFailures failures;
    private final String where;
    /** Null: the futures of async calls complete on Lettuce's I/O thread. */
    private final @Nullable Executor callbackExecutor;

    ScriptRunner(
            RedisScriptingAsyncCommands<byte[], byte[]> scripting,
            TimeBudget budget,
            RedisFailures failures,
            String where,
            @Nullable Executor callbackExecutor) {
        this.scripting = scripting;
        this.budget = budget;
        this.failures = failures;
        this.where = where;
        this.callbackExecutor = callbackExecutor;
    }

    /**
     * The future of one call: the reply, or the error, or {@link Degradation#TIMEOUT} at the deadline,
     * whichever comes first. A {@link TimeoutException} given to {@link #completeExceptionally} means the
     * deadline passed (the synchronous wait's, or {@code orTimeout}'s, which the JDK's delay scheduler
     * completes exactly so): it becomes this limiter's timeout error, and the command is cancelled, so that
     * Lettuce does not send it later if it has not yet.
     */
    final class Call<T> extends CompletableFuture<T> {
        final long start = System.nanoTime();
        /** The command once sent (null before): cancelled when the deadline passes first. */
        volatile @Nullable Future<?> sent;
        /** The call this one is a {@link #map} of (null for a call of its own): timed out with it. */
        private @Nullable Call<?> source;

        /** This call's answer made into another: one call, one deadline (a timeout of either times out both). */
        <U> Call<U> map(Function<? super T, ? extends U> fn) {
            Call<U> mapped = new Call<>();
            mapped.source = this;
            CompletableFuture<?> unused = whenComplete((r, e) -> {
                if (e != null) {
                    mapped.completeExceptionally(e);
                    return;
                }
                try {
                    mapped.complete(fn.apply(r));
                } catch (RuntimeException failure) {
                    mapped.completeExceptionally(failure);
                }
            });
            return mapped;
        }

        @Override
        public boolean completeExceptionally(Throwable e) {
            if (!(e instanceof TimeoutException)) {
                return super.completeExceptionally(e);
            }
            Call<?> s0 = source;
            if (s0 != null) {
                s0.completeExceptionally(new TimeoutException()); // its command cancelled, or left out of its batch
            }
            boolean won = super.completeExceptionally(failures.timedOut(e));
            Future<?> s = sent;
            if (won && s != null) {
                s.cancel(false);
            }
            return won;
        }
    }

    /** A call's future, for a command the limiter sends itself. */
    <T> Call<T> newCall() {
        return new Call<>();
    }

    /**
     * An async call's future as the user gets it: failed when its budget runs out (on the shared deadline timer), and
     * completed on the callback executor if one is set.
     */
    <T> CompletableFuture<T> withDeadline(Call<T> f) {
        CompletableFuture<T> bounded =
                budget.bound(f, budget.deadlineFrom(f.start), TimeBudget.Patience.NONE, ScriptRunner::expire);
        // whenCompleteAsync runs on the executor for a failure too (thenApplyAsync would not)
        return callbackExecutor == null ? bounded : bounded.whenCompleteAsync((v, e) -> {}, callbackExecutor);
    }

    /** Fails a call at its deadline: {@link Call} turns the {@link TimeoutException} into the store's timeout. */
    private static void expire(CompletableFuture<?> call) {
        call.completeExceptionally(new TimeoutException());
    }

    /**
     * EVALSHA; on NOSCRIPT (a restarted or flushed Redis: the script did not run) EVAL of the same text,
     * which runs it and caches it again, if the call's budget is not spent. One future per call, completed
     * from Lettuce's I/O thread; its deadline is enforced by whoever waits on it ({@link #await} or
     * {@link #withDeadline}), so both attempts share one deadline.
     */
    <T> Call<T> run(ScriptCall call, Function<List<Object>, T> finish) {
        return run(call, finish, new Call<>());
    }

    /** {@link #run(ScriptCall, java.util.function.Function)} completing a call made earlier (one that waited in a queue). */
    <T> Call<T> run(ScriptCall call, Function<List<Object>, T> finish, Call<T> result) {
        LuaScripts.Script s = call.script;
        RedisFuture<List<Object>> sent;
        try {
            sent = scripting.evalsha(s.sha(), ScriptOutputType.MULTI, call.keys, call.argv);
        } catch (RuntimeException e) {
            result.completeExceptionally(failures.translate(e, call));
            return result;
        }
        result.sent = sent;
        sent.whenComplete((reply, e) -> {
            if (e == null) {
                complete(call, result, reply, finish);
                return;
            }
            Throwable c = RedisFailures.unwrap(e);
            if (c instanceof RedisCommandExecutionException
                    && String.valueOf(c.getMessage()).startsWith("NOSCRIPT")) {
                // the caller gave up, or would before an answer could come: never run the script after that
                if (result.isDone() || budget.deadlineFrom(result.start) - System.nanoTime() <= 0) {
                    result.completeExceptionally(new TimeoutException());
                    return;
                }
                RedisFuture<List<Object>> again;
                try {
                    again = scripting.eval(s.body(), ScriptOutputType.MULTI, call.keys, call.argv);
                } catch (RuntimeException e2) {
                    result.completeExceptionally(failures.translate(e2, call));
                    return;
                }
                result.sent = again;
                if (result.isDone()) {
                    again.cancel(false); // timed out while the EVAL was being sent
                }
                again.whenComplete((reply2, e2) -> {
                    if (e2 == null) {
                        complete(call, result, reply2, finish);
                    } else {
                        result.completeExceptionally(failures.translate(e2, call));
                    }
                });
                return;
            }
            result.completeExceptionally(failures.translate(c, call));
        });
        return result;
    }

    /**
     * Completes {@code result} with what {@code finish} makes of the reply; when that is a token bucket value written
     * under other numbers ({@link ScriptCall.Changed}), the call again with the value converted, within its budget.
     */
    <T> void complete(ScriptCall call, Call<T> result, List<Object> reply, Function<List<Object>, T> finish) {
        try {
            result.complete(finish.apply(reply));
        } catch (ScriptCall.Changed changed) {
            again(call.reading(changed), finish, result); // the call sent, with what earlier repeats read
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
    }

    /** Runs {@code call} for {@code result}, a call whose first script did not decide, unless its budget is spent. */
    <T> void again(ScriptCall call, Function<List<Object>, T> finish, Call<T> result) {
        if (result.isDone() || budget.deadlineFrom(result.start) - System.nanoTime() <= 0) {
            result.completeExceptionally(new TimeoutException());
            return;
        }
        Call<T> unused = run(call, finish, result); // completes result
    }

    /** SCRIPT LOAD of every script, bounded by {@code connectTimeout}; the caller closes on failure. */
    void loadScripts(Duration connectTimeout) {
        try {
            for (LuaScripts.Script s : LuaScripts.INSTANCE.all()) {
                // on a cluster Lettuce sends SCRIPT LOAD to every node; a node that misses it (or a node
                // added later) gets the script by the NOSCRIPT fallback
                String sha = scripting
                        .scriptLoad(s.body())
                        .get(TimeBudget.saturatedNanos(connectTimeout), TimeUnit.NANOSECONDS);
                if (!s.sha().equals(sha)) {
                    throw new IllegalStateException(
                            "Redis returned digest " + sha + " for script " + s.name() + ", expected " + s.sha());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisStoreException(
                    "interrupted while loading the Sluice scripts into " + where, e, Degradation.UNAVAILABLE);
        } catch (TimeoutException e) {
            throw new RedisStoreException(
                    "Redis at " + where + " did not answer SCRIPT LOAD within "
                            + connectTimeout.toMillis()
                            + " ms (the connect timeout): it is overloaded or paused; check it, or "
                            + "raise connectTimeout",
                    e,
                    Degradation.TIMEOUT);
        } catch (ExecutionException | RuntimeException e) {
            throw failures.translate(e, null);
        }
    }

    /**
     * Waits for a call until its budget (from the call's start, as for an async call) is spent ({@link TimeBudget}:
     * extended only for a stall of this process), then the call is failed with {@link Degradation#TIMEOUT} and
     * its command cancelled if it was not sent yet.
     */
    <T> T await(Call<T> f) {
        try {
            return budget.await(f, budget.deadlineFrom(f.start), TimeBudget.Patience.NONE, ScriptRunner::expire);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            f.cancel(false);
            throw new RedisStoreException(
                    "interrupted while waiting for Redis at " + where, e, Degradation.STORE_ERROR);
        } catch (ExecutionException e) {
            Throwable c = RedisFailures.unwrap(e);
            throw c instanceof RuntimeException r
                    ? r
                    : new RedisStoreException(String.valueOf(c.getMessage()), c, RedisFailures.classify(c));
        }
    }

    /**
     * Waits for the warm-up call of {@code create()} (a peek, writing nothing) so that the first caller's decision
     * does not pay for the code paths' first use; bounded by the connect timeout, not the budget, since first use is
     * what it pays for. The caller closes on failure.
     */
    void warmUp(Call<?> f, Duration connectTimeout) {
        try {
            TimeBudget.of("connectTimeout", connectTimeout)
                    .await(
                            f,
                            f.start + TimeBudget.saturatedNanos(connectTimeout),
                            TimeBudget.Patience.NONE,
                            c -> c.completeExceptionally(new TimeoutException()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisStoreException("interrupted while warming up on " + where, e, Degradation.UNAVAILABLE);
        } catch (ExecutionException | RuntimeException e) {
            RuntimeException t = failures.translate(e, null);
            throw t instanceof RedisStoreException r && r.degradation() != Degradation.MISCONFIGURED
                    ? new RedisStoreException(
                            "Redis at " + where + " did not answer the first decision within "
                                    + connectTimeout.toMillis() + " ms (the connect timeout): " + r.getMessage(),
                            e,
                            r.degradation())
                    : t;
        }
    }

    /** {@code DEL key}: one call, its budget enforced by whoever waits on it. */
    Call<Long> delete(RedisKeyAsyncCommands<byte[], byte[]> keyCommands, byte[] key) {
        Call<Long> f = newCall();
        try {
            RedisFuture<Long> sent = keyCommands.del(key);
            f.sent = sent;
            sent.whenComplete((n, e) -> {
                if (e == null) {
                    f.complete(n);
                } else {
                    f.completeExceptionally(failures.translate(e, null));
                }
            });
        } catch (RuntimeException e) {
            f.completeExceptionally(failures.translate(e, null));
        }
        return f;
    }
}
