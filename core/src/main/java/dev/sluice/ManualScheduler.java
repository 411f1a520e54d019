package dev.sluice;

import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.ThreadFactory;

/**
 * A {@link Scheduler} whose time moves only when told to, for tests: {@link #advance(Duration)} moves its
 * {@link ManualTicker} and runs every task that falls due, in order of due time (then of scheduling), on the caller's
 * thread, each at its own instant (the ticker reads the task's due time while it runs); {@link #execute} queues a
 * task for the next advance (or {@link #runDue()}). Threads a component needs of its own (blocking I/O) are real
 * daemon threads. Thread-safe.
 */
public final class ManualScheduler implements Scheduler {
    private final ManualTicker ticker;
    private final PriorityQueue<Task> tasks = new PriorityQueue<>();
    private long sequence;

    private ManualScheduler(ManualTicker ticker) {
        this.ticker = ticker;
    }

    /** A scheduler on {@code ticker}: advancing either moves time, but only {@link #advance} runs due tasks. */
    public static ManualScheduler on(ManualTicker ticker) {
        return new ManualScheduler(java.util.Objects.requireNonNull(ticker, "ticker must not be null"));
    }

    @Override
    public ManualTicker ticker() {
        return ticker;
    }

    private final class Task implements Comparable<Task>, Cancellable {
        final long due;
        final long order;
        final Runnable run;
        boolean cancelled;

        Task(long due, long order, Runnable run) {
            this.due = due;
            this.order = order;
            this.run = run;
        }

        @Override
        public int compareTo(Task o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(order, o.order);
        }

        @Override
        public boolean cancel() {
            synchronized (ManualScheduler.this) {
                if (cancelled || !tasks.remove(this)) {
                    return false;
                }
                cancelled = true;
                return true;
            }
        }
    }

    @Override
    public synchronized Cancellable schedule(Duration delay, Runnable task) {
        long d = Scheduler.checkDelay(delay).toNanos();
        Task t = new Task(ticker.read() + d, sequence++, java.util.Objects.requireNonNull(task, "task"));
        tasks.add(t);
        return t;
    }

    @Override
    public void execute(Runnable task) {
        Cancellable unused = schedule(Duration.ZERO, task);
    }

    @Override
    public ThreadFactory threadFactory(String name) {
        return SystemScheduler.daemons(name);
    }

    /** Tasks scheduled and not yet run or cancelled. */
    public synchronized int pending() {
        return tasks.size();
    }

    /**
     * Moves time forward by {@code d}, running each task due meanwhile at its due time, in order, on this thread (a
     * task may schedule more; those due within {@code d} run too).
     */
    public ManualScheduler advance(Duration d) {
        long end = ticker.read() + Scheduler.checkDelay(d).toNanos();
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.due > end) {
                    break;
                }
                tasks.poll();
            }
            if (next.due > ticker.read()) {
                ticker.set(next.due);
            }
            next.run.run();
        }
        if (end > ticker.read()) {
            ticker.set(end);
        }
        return this;
    }

    /** Runs the tasks due now (those {@link #execute} queued, and any whose time has come), without moving time. */
    public ManualScheduler runDue() {
        return advance(Duration.ZERO);
    }

    @Override
    public String toString() {
        return "ManualScheduler[" + ticker + ", " + pending() + " pending]";
    }
}
