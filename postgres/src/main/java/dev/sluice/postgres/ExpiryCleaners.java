package dev.sluice.postgres;

import dev.sluice.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/** A limiter's {@link ExpiryCleaner}s: those it started, which closing it stops. */
final class ExpiryCleaners {
    private final ExpiredRows rows;
    private final BooleanSupplier limiterClosed;
    private final Scheduler scheduler;
    private final List<ExpiryCleaner> running = new CopyOnWriteArrayList<>();

    ExpiryCleaners(ExpiredRows rows, BooleanSupplier limiterClosed, Scheduler scheduler) {
        this.rows = rows;
        this.limiterClosed = limiterClosed;
        this.scheduler = scheduler;
    }

    /** A cleaner sweeping every {@code interval} on the scheduler until it or the limiter closes. */
    ExpiryCleaner start(Duration interval, int batchSize, int maxBatchesPerSweep) {
        ExpiryCleaner.checkInterval(interval);
        ExpiryCleaner cleaner = manual(batchSize, maxBatchesPerSweep);
        running.add(cleaner);
        cleaner.start(interval, scheduler);
        return cleaner;
    }

    /** A cleaner that sweeps only when called. */
    ExpiryCleaner manual(int batchSize, int maxBatchesPerSweep) {
        return new ExpiryCleaner(rows, limiterClosed, running::remove, batchSize, maxBatchesPerSweep);
    }

    void closeAll() {
        for (ExpiryCleaner cleaner : running) {
            cleaner.close();
        }
        running.clear();
    }
}
