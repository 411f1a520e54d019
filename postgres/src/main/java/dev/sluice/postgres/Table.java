package dev.sluice.postgres;

import dev.sluice.Limit;
import org.jspecify.annotations.Nullable;

/**
 * The three state tables, one per family of algorithms, in the fixed order a multi-permit request locks them; each
 * names its statements (rendered once per schema and prefix by {@link Sql}).
 */
enum Table {
    /** Token bucket and GCRA: a backlog and an instant. */
    BUCKET,
    /** Fixed and sliding window counters: a window number and its counts. */
    WINDOW,
    /** Sliding log: the admissions' instants and costs. */
    LOG;

    static Table of(Limit limit) {
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> BUCKET;
            case FIXED_WINDOW, SLIDING_WINDOW -> WINDOW;
            case SLIDING_LOG -> LOG;
        };
    }

    /**
     * The {@code limit_id} of a limit's rows: its {@link Limit#identity()}. Beside it, {@link #numbers(Limit)}: the
     * functions and {@link StoredNumbers} read a row written under other numbers of the same name under the caller's.
     */
    static String limitId(Limit limit) {
        return limit.identity();
    }

    /** The row a decision on {@code key} under {@code limit} is on: the key of core's batching, a row in one call at a time. */
    static Object row(String key, Limit limit) {
        return new Row(key, limitId(limit));
    }

    private record Row(String key, String limitId) {}

    /** A decision on the row of its key and limit ({@link #row}), as core's batching sees it. */
    interface RowDecision extends Batcher.Queued {
        @Override
        Limit limit();

        @Override
        default Object batchKey() {
            return row(key(), limit());
        }
    }

    /** The {@code numbers} a row of {@code limit} is written under: null for an unnamed limit (its id is its numbers). */
    static @Nullable String numbers(Limit limit) {
        return limit.name() == null ? null : limit.id();
    }

    /** Reads the row as it is, or none, and the clock: {@code peek}. */
    String peek(Sql sql) {
        return switch (this) {
            case BUCKET -> sql.bucketPeek;
            case WINDOW -> sql.windowPeek;
            case LOG -> sql.logPeek;
        };
    }

    /** Deletes one key's row: {@code reset}. */
    String reset(Sql sql) {
        return switch (this) {
            case BUCKET -> sql.bucketReset;
            case WINDOW -> sql.windowReset;
            case LOG -> sql.logReset;
        };
    }

    /** Locks (or creates) the rows a multi-permit request names, in one fixed order, and reads them. */
    String lock(Sql sql) {
        return switch (this) {
            case BUCKET -> sql.bucketLock;
            case WINDOW -> sql.windowLock;
            case LOG -> sql.logLock;
        };
    }

    /** Writes one row's new state: a multi-permit request's, once every permit is allowed. */
    String update(Sql sql) {
        return switch (this) {
            case BUCKET -> sql.bucketUpdate;
            case WINDOW -> sql.windowUpdate;
            case LOG -> sql.logUpdate;
        };
    }

    /** Deletes a batch of expired rows, skipping those a decision holds: the expiry cleaner's. */
    String clean(Sql sql) {
        return switch (this) {
            case BUCKET -> sql.bucketClean;
            case WINDOW -> sql.windowClean;
            case LOG -> sql.logClean;
        };
    }
}
