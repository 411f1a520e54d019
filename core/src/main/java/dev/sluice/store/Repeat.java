package dev.sluice.store;

import dev.sluice.Scheduler;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A task run again and again on a {@link Scheduler}'s time, each run after the last one ended, for the components that
 * poll or retry: the fail-safe limiter's opener, PostgreSQL's expiry cleaner, the server's rules watcher and store
 * watch. A run may block (a connect, JDBC, the file system): it goes to a daemon thread of the scheduler's factory,
 * {@code sluice-<name>-<n>}, never to the scheduler's timer, and says how long to wait before the next run, or that
 * there is none. {@link #close(Duration)} cancels the next run and stops the thread.
 *
 * <p>Tests give a {@link dev.sluice.ManualScheduler} and, as where runs go, the thread that advances it
 * ({@code Runnable::run}): each advance then makes the runs that fall due, on the test's thread.
 */
public final class Repeat {

    /** One run. */
    @FunctionalInterface
    public interface Run {
        /** Does the work; returns the wait before the next run, or null when there is none. */
        @Nullable
        Duration run();
    }

    private final Scheduler scheduler;
    private final Run run;
    private final Executor runs;
    /** The thread of its own, unless runs go where a test said; shut down once no run follows or on close. */
    private final @Nullable ThreadPoolExecutor ownThread;

    private final Object lock = new Object();
    /** Guarded by {@link #lock}, as is {@link #closed}. */
    private Scheduler.@Nullable Cancellable next;

    private boolean closed;

    /**
     * @param name   the thread's name in {@code sluice-<name>-<n>}
     * @param runsOn where runs go instead (tests); null: the thread of its own
     */
    public Repeat(Scheduler scheduler, String name, @Nullable Executor runsOn, Run run) {
        this.scheduler = scheduler;
        this.run = run;
        if (runsOn != null) {
            this.ownThread = null;
            this.runs = runsOn;
        } else {
            ThreadPoolExecutor own = new ThreadPoolExecutor(
                    1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), scheduler.threadFactory(name));
            this.ownThread = own;
            this.runs = own;
        }
    }

    /** Makes the first run now (on its thread). */
    public void now() {
        hand();
    }

    /** Makes the first run once {@code delay} has passed on the scheduler's time. */
    public void after(Duration delay) {
        synchronized (lock) {
            if (!closed) {
                next = scheduler.schedule(delay, this::hand);
            }
        }
    }

    private void hand() {
        try {
            runs.execute(this::runOnce);
        } catch (RejectedExecutionException closedMeanwhile) {
            // close() stopped the thread between scheduling this run and now
        }
    }

    private void runOnce() {
        synchronized (lock) {
            if (closed) {
                return;
            }
        }
        Duration wait = run.run();
        if (wait != null) {
            after(wait);
        } else if (ownThread != null) {
            ownThread.shutdown(); // nothing follows: the thread ends
        }
    }

    /**
     * Cancels the next run; a run under way may finish within {@code wait}, after which its thread is interrupted
     * ({@link Duration#ZERO}: at once). Idempotent.
     */
    public void close(Duration wait) {
        Scheduler.Cancellable n;
        synchronized (lock) {
            closed = true;
            n = next;
            next = null;
        }
        if (n != null) {
            n.cancel();
        }
        ThreadPoolExecutor own = ownThread;
        if (own == null) {
            return;
        }
        own.shutdown();
        try {
            if (!own.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                own.shutdownNow();
            }
        } catch (InterruptedException e) {
            own.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
