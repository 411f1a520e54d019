package dev.sluice.store;

import dev.sluice.Scheduler;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * How long a caller waits for a remote store that does not answer: one type for every store (Redis,
 * PostgreSQL, the remote client) and the service.
 *
 * <p><b>What a budget is for.</b> It exists to catch a dead store (killed, paused, unreachable), not to fail
 * a busy one: a default sits far above a healthy store's measured p99.9 under load, and a healthy store never
 * runs into it. A call that does run out of budget fails with the store's {@code TIMEOUT}, which a
 * {@code FailSafeRateLimiter} turns into a policy decision.
 *
 * <p><b>A deadline is counted from the call's start</b> ({@link #deadlineFrom(long)}, on the
 * {@link System#nanoTime()} scale) and enforced on the caller's side: a synchronous caller parks until it
 * ({@link #await}), an async call's future is failed at it ({@link #bound}). Two things may move it later,
 * and nothing else:
 * <ul>
 * <li><b>A stall of this process.</b> When the waiting thread wakes up later than its deadline by more than
 *     {@link #STALL} (a GC pause, a starved CPU), the threads that would have completed the call (an I/O
 *     thread reading a reply that arrived meanwhile) did not run either; failing the call then would blame
 *     the store for the machine. So the wait is extended once by as long as it overslept, at most one budget.
 *     On a machine that runs its threads on time this never happens, and a dead store is still failed at the
 *     budget.</li>
 * <li><b>The store's own {@link Patience}.</b> A store may keep a call waiting past its deadline for a reason
 *     it can name: PostgreSQL keeps a decision queued for a pooled connection waiting as long as the database
 *     keeps answering other decisions (queueing behind others is not a failure of the store).</li>
 * </ul>
 * When the wait ends, the store's {@code expire} callback fails the call with the store's own exception
 * (unless the answer won the race), and the caller gets the outcome, whichever it is.
 */
public final class TimeBudget {

    /**
     * How late a waiting thread may wake before its lateness counts as a stall of this process rather than
     * of the store. A parked thread is woken within a fraction of a millisecond on an idle machine and within
     * a few on a loaded one.
     */
    public static final Duration STALL = Duration.ofMillis(5);

    private static final long STALL_NANOS = STALL.toNanos();

    /**
     * The remote stores' default budget per call (Redis, PostgreSQL, the service's {@code --store-timeout}). It
     * catches a dead or paused store, not a busy one: a healthy store's p99.9 under load was 19 to 189 ms (bench/
     * README.md, "Healthy stores under load"), but on a 2-core machine running ten times as many busy threads as
     * cores a healthy store's call was seen to take more than 250 ms (the default until issue 29): a statement
     * that waited that long for a CPU, three processes' conflicts on one hot row under SERIALIZABLE. Such a machine
     * is slow, not broken, and a default must not turn it into errors; an outage costs the first calls at most this
     * before the circuit opens.
     */
    public static final Duration DEFAULT = Duration.ofSeconds(1);

    /** The longest budget accepted: longer than any sane wait on a store. */
    public static final Duration MAX = Duration.ofHours(1);

    private final Duration duration;
    private final long nanos;

    private TimeBudget(Duration duration) {
        this.duration = duration;
        this.nanos = duration.toNanos();
    }

    /**
     * A budget of {@code duration}, from 1 ms to one hour; {@code what} names the setting in the error, e.g.
     * {@code "timeBudget"}.
     */
    public static TimeBudget of(String what, Duration duration) {
        Objects.requireNonNull(duration, what + " must not be null: e.g. Duration.ofMillis(100)");
        if (duration.compareTo(Duration.ofMillis(1)) < 0 || duration.compareTo(MAX) > 0) {
            throw new IllegalArgumentException(
                    what + " " + duration + " is out of range: give 1 ms to 1 hour," + " e.g. Duration.ofMillis(100)");
        }
        return new TimeBudget(duration);
    }

    /** A budget of {@code duration}, from 1 ms to one hour. */
    public static TimeBudget of(Duration duration) {
        return of("time budget", duration);
    }

    /** {@code d} in nanoseconds, {@link Long#MAX_VALUE} for one too long to count so (about 292 years or more). */
    public static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    public Duration duration() {
        return duration;
    }

    public long nanos() {
        return nanos;
    }

    public long millis() {
        return duration.toMillis();
    }

    /** The deadline ({@link System#nanoTime()} scale) of a call that started at {@code startNanos}. */
    public long deadlineFrom(long startNanos) {
        return startNanos + nanos;
    }

    /** The deadline of a call starting now. */
    public long deadline() {
        return System.nanoTime() + nanos;
    }

    @Override
    public String toString() {
        return duration.toMillis() + " ms";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TimeBudget b && b.nanos == nanos;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(nanos);
    }

    // ------------------------------------------------------------------------------------------- waiting

    /**
     * Why a store keeps a call waiting past its deadline. Asked when the deadline passes (after any stall
     * extension), it returns the call's new deadline, or {@code deadline} itself (or anything not after
     * {@code now}) to let the call fail now.
     */
    @FunctionalInterface
    public interface Patience {
        long extendTo(long deadline, long now);

        /** No reason: the call fails at its deadline. */
        Patience NONE = (deadline, now) -> deadline;
    }

    /**
     * The deadline a wait that should have ended at {@code deadline} continues to at {@code now}, or
     * {@code deadline} when it ends now. {@code stallGranted} says whether this wait was already extended
     * for a stall (once per wait).
     */
    private long next(long deadline, long now, boolean stallGranted, Patience patience) {
        long late = now - deadline;
        if (!stallGranted && late > STALL_NANOS) {
            return now + Math.min(late, nanos);
        }
        long extended = patience.extendTo(deadline, now);
        return extended - now > 0 ? extended : deadline;
    }

    /**
     * Waits for {@code call} until {@code deadline}, extended as the class comment says; then
     * {@code expire} must complete it exceptionally with the store's timeout (it may lose to the answer),
     * and its outcome is returned or thrown as by {@link CompletableFuture#get()}.
     */
    public <T> T await(
            CompletableFuture<T> call, long deadline, Patience patience, Consumer<? super CompletableFuture<T>> expire)
            throws InterruptedException, ExecutionException {
        if (!call.isDone()) {
            Burst.endNow(); // a decision this thread's burst holds would otherwise wait for this wait to end
        }
        boolean stallGranted = false;
        while (true) {
            try {
                return call.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                long now = System.nanoTime();
                long next = next(deadline, now, stallGranted, patience);
                if (next != deadline) {
                    stallGranted |= now - deadline > STALL_NANOS;
                    deadline = next;
                    continue;
                }
                expire.accept(call);
                return call.get(); // completed now: the timeout, or the answer that won the race
            }
        }
    }

    /**
     * Makes {@code call} fail at {@code deadline} (extended as the class comment says) through
     * {@code expire}, without any thread waiting for it; returns {@code call}. The check runs on
     * {@link Scheduler#system()}'s timer thread (shared by the JVM's limiters) and is cancelled when the call completes
     * first. Deadlines are on the {@link System#nanoTime()} scale.
     */
    public <T> CompletableFuture<T> bound(
            CompletableFuture<T> call,
            long deadline,
            Patience patience,
            Consumer<? super CompletableFuture<T>> expire) {
        if (!call.isDone()) {
            new Expiry<>(this, call, patience, expire).schedule(deadline, false);
        }
        return call;
    }

    /** The timer check of one async call. */
    private static final class Expiry<T> implements Runnable {
        private final TimeBudget budget;
        private final CompletableFuture<T> call;
        private final Patience patience;
        private final Consumer<? super CompletableFuture<T>> expire;
        private long deadline;
        private boolean stallGranted;

        Expiry(
                TimeBudget budget,
                CompletableFuture<T> call,
                Patience patience,
                Consumer<? super CompletableFuture<T>> expire) {
            this.budget = budget;
            this.call = call;
            this.patience = patience;
            this.expire = expire;
        }

        void schedule(long at, boolean stalled) {
            deadline = at;
            stallGranted |= stalled;
            Scheduler.Cancellable check =
                    Scheduler.system().schedule(Duration.ofNanos(Math.max(0, at - System.nanoTime())), this);
            CompletableFuture<T> unused = call.whenComplete((v, e) -> check.cancel());
        }

        @Override
        public void run() {
            if (call.isDone()) {
                return;
            }
            long now = System.nanoTime();
            long next = budget.next(deadline, now, stallGranted, patience);
            if (next != deadline) {
                schedule(next, now - deadline > STALL_NANOS);
                return;
            }
            expire.accept(call);
        }
    }
}
