package dev.sluice.server.decision;

import dev.sluice.Degradation;
import dev.sluice.FailureKind;
import dev.sluice.StoreException;
import dev.sluice.http.HttpProblems;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Where and how long the store is called. The in-memory store decides on the caller's (event-loop) thread: it never
 * blocks. Remote stores run on a bounded executor, under the service's own deadline: a budget per store call the
 * work makes plus {@value DecisionService#DEADLINE_SLACK_MILLIS} ms, which only a store that broke its own budget
 * (or a backed-up pool) reaches. A full pool is {@code store-overloaded}, the deadline {@code store-timeout}, and
 * what a store throws is translated to the service's exceptions here.
 */
final class StoreCalls {
    private final String storeName;
    private final @Nullable ExecutorService storeExecutor;
    private final long storeTimeoutNanos;
    private final ServerMetrics metrics;

    /** @param storeExecutor null to call the store on the caller's thread (the in-memory store) */
    StoreCalls(
            String storeName, @Nullable ExecutorService storeExecutor, long storeTimeoutNanos, ServerMetrics metrics) {
        this.storeName = storeName;
        this.storeExecutor = storeExecutor;
        this.storeTimeoutNanos = storeTimeoutNanos;
        this.metrics = metrics;
    }

    /**
     * Runs {@code work}, which makes at most {@code storeCalls} store calls, on the store pool; the service's
     * deadline is that many budgets plus {@link DecisionService#DEADLINE_SLACK_MILLIS} (the calls are sequential, and each is
     * bounded by the store's budget).
     */
    <T> CompletableFuture<T> run(int storeCalls, Supplier<T> work) {
        if (storeExecutor == null) {
            try {
                return CompletableFuture.completedFuture(work.get());
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(translate(e));
            }
        }
        CompletableFuture<T> f;
        try {
            f = CompletableFuture.supplyAsync(work, storeExecutor);
        } catch (RejectedExecutionException e) {
            metrics.storeError("overloaded");
            return CompletableFuture.failedFuture(new ServiceException(
                    FailureKind.OVERLOADED,
                    "the " + storeName + " store has too many requests waiting: retry shortly",
                    e));
        }
        return bounded(f, storeCalls);
    }

    /** True when the store is remote: its calls leave the event loop. */
    boolean remote() {
        return storeExecutor != null;
    }

    /**
     * {@link #run} for work that makes one asynchronous store call and returns its future at once (it must not block):
     * called on the caller's thread, under the same deadline, its failures translated the same way.
     */
    <T> CompletableFuture<T> runAsync(int storeCalls, Supplier<CompletableFuture<T>> work) {
        CompletableFuture<T> f;
        try {
            f = work.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(translate(e));
        }
        return bounded(f, storeCalls);
    }

    private <T> CompletableFuture<T> bounded(CompletableFuture<T> f, int storeCalls) {
        long deadline = deadlineNanos(storeCalls);
        return f.orTimeout(deadline, TimeUnit.NANOSECONDS).handle((r, t) -> {
            if (t == null) {
                return r;
            }
            Throwable c = FailureKind.unwrap(t);
            if (c instanceof TimeoutException) {
                metrics.storeError("timeout");
                throw new CompletionException(new ServiceException(
                        FailureKind.TIMED_OUT,
                        "the " + storeName
                                + " store did not answer within " + TimeUnit.NANOSECONDS.toMillis(deadline) + " ms ("
                                + storeCalls
                                + " call(s) of its budget, --store-timeout "
                                + TimeUnit.NANOSECONDS.toMillis(storeTimeoutNanos)
                                + " ms, plus " + DecisionService.DEADLINE_SLACK_MILLIS + " ms)",
                        c));
            }
            throw new CompletionException(translate(c));
        });
    }

    /**
     * The service's exception for what a store call threw, by its {@link FailureKind}: bad input (a 400), an
     * operation the store or the limit's algorithm does not define (a 501), or the store's failure (a 503 with the
     * store's cause; anything a store throws that is no {@link dev.sluice.StoreException} is a {@code store-error}).
     */
    ServiceException translate(Throwable thrown) {
        Throwable t = FailureKind.unwrap(thrown);
        if (t instanceof ServiceException s) {
            return s;
        }
        FailureKind kind = FailureKind.of(t);
        switch (kind) {
            case BAD_REQUEST -> {
                return new BadRequestException(HttpProblems.type(kind), t.getMessage());
            }
            case UNSUPPORTED -> {
                return new ServiceException(
                        kind,
                        t.getMessage() == null
                                ? "the " + storeName + " store does not implement this operation"
                                : t.getMessage(),
                        t);
            }
            default -> {
                // what the failure policy does not absorb (reset) or a bare store: the store's own classification
                Degradation cause = t instanceof StoreException e ? e.degradation() : Degradation.STORE_ERROR;
                metrics.storeError(cause == Degradation.STORE_ERROR ? "error" : cause.label());
                return new ServiceException(
                        FailureKind.of(cause),
                        "the " + storeName + " store failed"
                                + (t instanceof StoreException ? " (" + cause.label() + ")" : "")
                                + ": " + (t.getMessage() == null ? "no detail (see the service log)" : t.getMessage()),
                        t);
            }
        }
    }

    /** The service's deadline for work making {@code storeCalls} sequential store calls (saturating). */
    private long deadlineNanos(int storeCalls) {
        long slack = TimeUnit.MILLISECONDS.toNanos(DecisionService.DEADLINE_SLACK_MILLIS);
        long calls = Math.max(1, storeCalls);
        return storeTimeoutNanos > (Long.MAX_VALUE - slack) / calls
                ? Long.MAX_VALUE
                : storeTimeoutNanos * calls + slack;
    }
}
