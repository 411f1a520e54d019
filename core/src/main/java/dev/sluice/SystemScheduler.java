package dev.sluice;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/** {@link Scheduler#system()}: one daemon timer thread for the JVM; threads from a factory. */
final class SystemScheduler implements Scheduler {
    static final SystemScheduler DEFAULT = new SystemScheduler(null);

    /** The one timer thread of every deadline and delay; a cancelled task leaves its queue at once. */
    private static final class Timer {
        static final ScheduledThreadPoolExecutor INSTANCE = create();

        private static ScheduledThreadPoolExecutor create() {
            ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemons("timer"));
            t.setRemoveOnCancelPolicy(true);
            return t;
        }
    }

    /** Null: daemon threads named {@code sluice-<name>-<n>}. */
    private final @Nullable ThreadFactory threads;

    SystemScheduler(@Nullable ThreadFactory threads) {
        this.threads = threads;
    }

    @Override
    public Ticker ticker() {
        return Ticker.system();
    }

    @Override
    public Cancellable schedule(Duration delay, Runnable task) {
        ScheduledFuture<?> f =
                Timer.INSTANCE.schedule(task, saturatedNanos(Scheduler.checkDelay(delay)), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    /** {@link #schedule} in nanoseconds, for the hot path of deadlines (no Duration, no handle). */
    static ScheduledFuture<?> scheduleNanos(long delayNanos, Runnable task) {
        return Timer.INSTANCE.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
    }

    @Override
    public void execute(Runnable task) {
        Timer.INSTANCE.execute(task);
    }

    @Override
    public ThreadFactory threadFactory(String name) {
        return threads != null ? threads : daemons(name);
    }

    /** Daemon threads named {@code sluice-<name>-<n>} ({@code sluice-<name>} for the timer). */
    static ThreadFactory daemons(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t =
                    new Thread(r, name.equals("timer") ? "sluice-timer" : "sluice-" + name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public String toString() {
        return threads == null ? "Scheduler.system()" : "Scheduler.system(" + threads + ")";
    }
}
