package dev.sluice;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;

/**
 * The one seam for time and threads of Sluice's components that wait or start threads (the batches' dispatchers, the
 * deadlines of remote calls, the fail-safe limiter's reopening, the expiry cleaner, leases' takes ahead): a clock, a
 * way to run a task later, one to run it soon, and the factory of the threads a component needs of its own (blocking
 * JDBC work). Caffeine's {@code Scheduler} and {@code Ticker} and HikariCP's thread factory are the models.
 *
 * <p>{@link #system()} is the default: {@link Ticker#system()}, one daemon timer thread shared by the JVM's limiters
 * for delays (tasks must be short and must not block: they complete futures, they do not do I/O) and daemon threads
 * named {@code sluice-<name>-<n>}. {@link #system(ThreadFactory)} takes the application's thread factory for the
 * threads (not for the shared timer). Tests use {@link ManualScheduler}: time moves when the test says, and due tasks
 * run on the test's thread, in order, so nothing sleeps.
 */
public interface Scheduler {

    /** The clock the delays of {@link #schedule} are measured on. */
    Ticker ticker();

    /** Runs {@code task} once {@code delay} has passed on {@link #ticker()}; the handle cancels it if it has not run. */
    Cancellable schedule(Duration delay, Runnable task);

    /** Runs {@code task} soon, not on the caller's thread ({@link ManualScheduler}: on the next advance). */
    void execute(Runnable task);

    /** The factory of the threads a component named {@code name} starts for itself (daemon threads). */
    ThreadFactory threadFactory(String name);

    /** A scheduled task. */
    @FunctionalInterface
    interface Cancellable {
        /** Cancels the task unless it has run or is running; true if this call cancelled it. */
        boolean cancel();
    }

    /** The default: the system ticker, one shared daemon timer thread, daemon threads named {@code sluice-…}. */
    static Scheduler system() {
        return SystemScheduler.DEFAULT;
    }

    /** {@link #system()} with the application's thread factory for the threads components start. */
    static Scheduler system(ThreadFactory threads) {
        return new SystemScheduler(java.util.Objects.requireNonNull(threads, "threads must not be null"));
    }

    /** Checks a delay: not null, not negative. */
    static Duration checkDelay(Duration delay) {
        java.util.Objects.requireNonNull(delay, "delay must not be null: e.g. Duration.ofMillis(200)");
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay " + delay + " is negative: give zero or more");
        }
        return delay;
    }
}
