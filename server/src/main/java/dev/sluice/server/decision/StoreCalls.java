package dev.sluice.server.decision;

import dev.sluice.Degradation;
import dev.sluice.FailureKind;
import dev.sluice.Scheduler;
import dev.sluice.StoreException;
import dev.sluice.http.HttpProblems;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * How long the store is called, and what its failures become. Every store call is asynchronous and made on the
 * caller's (event-loop) thread: the in-memory store's future is complete when it returns, a remote store's completes
 * when the store answers (its own time budget bounds it, and its own queue bound answers an overload by its failure
 * policy). The service's own deadline guards the future: a budget per store call the request makes one after another
 * plus {@value DecisionService#DEADLINE_SLACK_MILLIS} ms, on the core {@link Scheduler}'s timer (no thread of its own),
 * which only a store that broke its own budget reaches ({@code store-timeout}). What a store throws is translated to
 * the service's exceptions here.
 */
final class StoreCalls {
    private final String storeName;
    private final long storeTimeoutNanos;
    private final ServerMetrics metrics;
    private final Scheduler scheduler;

    StoreCalls(String storeName, long storeTimeoutNanos, ServerMetrics metrics, Scheduler scheduler) {
        this.storeName = storeName;
        this.storeTimeoutNanos = storeTimeoutNanos;
        this.metrics = metrics;
        this.scheduler = scheduler;
    }

    /**
     * Runs {@code work}, which makes its store calls asynchronously, at most {@code storeCalls} of them one after
     * another, and returns their future at once (it must not block). A future already complete (the in-memory store)
     * is answered as it is, with no timer; a pending one is bounded by the service's deadline. It fails with a
     * {@link ServiceException}, never with anything else.
     */
    <T> CompletableFuture<T> run(int storeCalls, Supplier<CompletableFuture<T>> work) {
        CompletableFuture<T> f;
        try {
            f = work.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(translate(e));
        }
        if (f.isDone() && !f.isCompletedExceptionally()) {
            return f; // the in-memory store: no timer
        }
        long deadline = deadlineNanos(storeCalls);
        CompletableFuture<T> out = new CompletableFuture<>();
        Scheduler.Cancellable timer = scheduler.schedule(Duration.ofNanos(deadline), () -> {
            if (!out.isDone()) {
                metrics.storeError("timeout");
                out.completeExceptionally(new ServiceException(
                        FailureKind.TIMED_OUT,
                        "the " + storeName
                                + " store did not answer within " + TimeUnit.NANOSECONDS.toMillis(deadline) + " ms ("
                                + Math.max(1, storeCalls)
                                + " call(s) of its budget, --store-timeout "
                                + TimeUnit.NANOSECONDS.toMillis(storeTimeoutNanos)
                                + " ms, plus " + DecisionService.DEADLINE_SLACK_MILLIS + " ms)",
                        new TimeoutException()));
            }
        });
        CompletableFuture<?> unused = f.whenComplete((r, t) -> {
            timer.cancel();
            if (t == null) {
                out.complete(r);
            } else {
                out.completeExceptionally(translate(t));
            }
        });
        return out;
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
