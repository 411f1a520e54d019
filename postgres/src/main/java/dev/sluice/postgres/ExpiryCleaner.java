package dev.sluice.postgres;

import dev.sluice.Scheduler;
import dev.sluice.Ticker;
import dev.sluice.store.Repeat;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Deletes rows whose {@code expires_at} has passed: such a row equals a fresh key's state, so deleting it
 * changes no decision. A sweep deletes in batches ({@value #DEFAULT_BATCH_SIZE} rows by default), each
 * batch one short statement that picks its rows with {@code FOR UPDATE SKIP LOCKED}: a row a decision holds
 * is skipped (it is being written anyway), and a decision never waits on the cleaner for longer than one
 * row's delete. A sweep stops after {@value #DEFAULT_MAX_BATCHES} batches, or earlier when a batch comes
 * back short, so a backlog of expired rows is worked off over several sweeps instead of in one long one.
 *
 * <p>A decision that races the delete of its row stays exact: it either locked the row first (the
 * cleaner skips it) or finds it gone once the cleaner commits, and then starts from a fresh state, which
 * the expired row was equal to.
 *
 * <p>Time is the limiter's: the database's clock by default, its ticker when it has one. A scheduled cleaner waits
 * its interval on the limiter's {@link Scheduler} (after each sweep: sweeps never overlap) and sweeps on a daemon
 * thread of the scheduler's factory, {@code sluice-postgres-cleaner-<n>}: a sweep is JDBC, it blocks.
 */
public final class ExpiryCleaner implements AutoCloseable {

    /** Rows deleted by one statement. */
    public static final int DEFAULT_BATCH_SIZE = 1_000;
    /** Batches in one sweep at most. */
    public static final int DEFAULT_MAX_BATCHES = 10;

    private static final System.Logger LOG = System.getLogger(ExpiryCleaner.class.getName());

    private final ExpiredRows rows;
    /** Whether the limiter closed: a sweep then fails, and a scheduled one that raced the close is quiet. */
    private final BooleanSupplier limiterClosed;
    /** Tells the limiter this cleaner stopped, so that closing the limiter does not close it again. */
    private final Consumer<ExpiryCleaner> onClose;

    private final int batchSize;
    private final int maxBatches;
    private final AtomicLong deleted = new AtomicLong();
    private final AtomicLong sweeps = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicReference<RuntimeException> lastFailure = new AtomicReference<>();
    /** The sweeps of a scheduled cleaner; null until {@link #start}. */
    private volatile @Nullable Repeat schedule;

    ExpiryCleaner(
            ExpiredRows rows,
            BooleanSupplier limiterClosed,
            Consumer<ExpiryCleaner> onClose,
            int batchSize,
            int maxBatches) {
        this.rows = Objects.requireNonNull(rows);
        this.limiterClosed = limiterClosed;
        this.onClose = onClose;
        if (batchSize < 1 || batchSize > 1_000_000) {
            throw new IllegalArgumentException(
                    "batchSize " + batchSize + " must be between 1 and 1,000,000 rows: e.g. 1000");
        }
        if (maxBatches < 1) {
            throw new IllegalArgumentException("maxBatchesPerSweep " + maxBatches + " must be at least 1: e.g. 10");
        }
        this.batchSize = batchSize;
        this.maxBatches = maxBatches;
    }

    static void checkInterval(Duration interval) {
        Objects.requireNonNull(interval, "interval must not be null: e.g. Duration.ofMinutes(1)");
        if (interval.toMillis() < 1) {
            throw new IllegalArgumentException(
                    "cleaner interval " + interval + " is shorter than 1 ms: e.g. Duration.ofMinutes(1)");
        }
    }

    /** Sweeps every {@code interval} (after each sweep) on {@code scheduler}'s time, until {@link #close()}. */
    void start(Duration interval, Scheduler scheduler) {
        checkInterval(interval);
        this.ticker = scheduler.ticker();
        Repeat r = new Repeat(scheduler, "postgres-cleaner", null, () -> {
            sweepQuietly();
            return interval;
        });
        schedule = r;
        r.after(interval);
    }

    /** The clock of the lines about failing sweeps: the scheduler's once started. */
    private Ticker ticker = Ticker.system();

    /** The least time between two lines about sweeps failing for the same outage of the database. */
    private static final long REMINDER_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** Since when sweeps fail because the database cannot serve ({@link #ticker}), and the last line said so. */
    private long failingSince;

    private long lastLineAt;
    private boolean failing;

    /**
     * A scheduled sweep. A database that is down (or refusing the login) fails every sweep: that is one line when
     * it starts, a reminder at most every 30 s, and one when sweeps work again, not a stack trace every interval;
     * any other failure is logged with its stack trace. These lines are DEBUG, since the limiter's decisions tell an
     * outage or a refused login already (FailSafeRateLimiter's one line when it starts, one when it ends), except a
     * privilege the cleaner lacks (SQLSTATE 42501, say DELETE), a WARNING: decisions may not meet it.
     */
    private void sweepQuietly() {
        try {
            sweep();
            if (failing) {
                failing = false;
                LOG.log(
                        System.Logger.Level.DEBUG,
                        "expiry sweeps work again after " + TimeUnit.NANOSECONDS.toSeconds(ticker.read() - failingSince)
                                + " s");
            }
        } catch (RuntimeException e) {
            if (limiterClosed.getAsBoolean()) {
                return; // the limiter closed under this sweep: it is being stopped, not failing
            }
            failures.incrementAndGet();
            lastFailure.set(e);
            if (!(e instanceof PostgresStoreException p) || !p.degradation().storeUnhealthy()) {
                LOG.log(System.Logger.Level.WARNING, "expiry sweep failed; the next one will try again", e);
                return;
            }
            long now = ticker.read();
            // a privilege only the cleaner needs (DELETE) is its own to tell; a refused login, the decisions tell
            System.Logger.Level level =
                    "42501".equals(p.sqlState()) ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG;
            if (!failing) {
                failing = true;
                failingSince = now;
                lastLineAt = now;
                LOG.log(
                        level,
                        "expiry sweeps fail (" + p.degradation().label() + "); each interval tries again: "
                                + e.getMessage());
            } else if (now - lastLineAt >= REMINDER_NANOS) {
                lastLineAt = now;
                LOG.log(
                        level,
                        "expiry sweeps still fail (" + p.degradation().label() + ") after "
                                + TimeUnit.NANOSECONDS.toSeconds(now - failingSince) + " s: " + e.getMessage());
            }
        }
    }

    /**
     * One sweep, now, on the calling thread: the bucket, window, log, pending and in-flight tables in turn, at most
     * {@code maxBatchesPerSweep} batches (statements that deleted rows) in all, so at most that many
     * statements plus one empty probe per table. Returns the rows deleted. After the limiter is closed,
     * an {@link IllegalStateException}.
     */
    public long sweep() {
        long total = 0;
        int batches = 0;
        for (String table : rows.tables) {
            while (batches < maxBatches) {
                if (limiterClosed.getAsBoolean()) {
                    throw new IllegalStateException(PostgresRateLimiter.CLOSED);
                }
                int n = rows.delete(table, batchSize);
                if (n == 0) {
                    break; // nothing (left) to delete here: an empty probe is not a batch
                }
                batches++;
                total += n;
                if (n < batchSize) {
                    break;
                }
            }
        }
        sweeps.incrementAndGet();
        deleted.addAndGet(total);
        return total;
    }

    /** Rows deleted since this cleaner started. */
    public long deletedRows() {
        return deleted.get();
    }

    /** Sweeps completed. */
    public long sweeps() {
        return sweeps.get();
    }

    /** Sweeps that failed (the database was down, say); the cleaner keeps going. */
    public long failedSweeps() {
        return failures.get();
    }

    /** The last failure of a scheduled sweep, or null. */
    public @Nullable RuntimeException lastFailure() {
        return lastFailure.get();
    }

    public int batchSize() {
        return batchSize;
    }

    public int maxBatchesPerSweep() {
        return maxBatches;
    }

    /** Stops the schedule; a sweep under way finishes its current statement. Idempotent. */
    @Override
    public void close() {
        Repeat r = schedule;
        if (r != null) {
            r.close(Duration.ofSeconds(5));
        }
        onClose.accept(this);
    }
}
