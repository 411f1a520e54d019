package dev.sluice.postgres;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.jspecify.annotations.Nullable;

/**
 * Where a decision is, so that a caller whose budget ran out can say why: still waiting for a worker
 * or a pooled connection (nothing sent), or sent and unanswered. Batched requests follow their batch.
 */
class DecisionCall {
    static final int QUEUED = 0;
    static final int CONNECTING = 1;
    static final int SENT = 2;

    /** The budget's end: from the call at first, from the moment it is sent once it is. */
    volatile long deadlineNanos;
    /** Set when the caller stopped waiting: a call not sent yet is then never sent. */
    volatile boolean abandoned;
    /** Once sent: when the server cancels the statement, the longest a caller waits for it. */
    volatile long sentLimitNanos;
    /** The statement under way and its attempt's connection, for a caller who stops waiting to cancel. */
    private @Nullable Statement statement;

    private @Nullable Connection connection;
    /** The batch this decision travels in (its statement is the batch's), or null when it goes alone. */
    volatile @Nullable DecisionCall inBatch;

    private volatile int phase = QUEUED;

    /** True for the limiter's own work (warm-up, expiry sweeps): not a decision, not counted as one. */
    final boolean maintenance;

    DecisionCall(long deadlineNanos) {
        this(deadlineNanos, false);
    }

    private DecisionCall(long deadlineNanos, boolean maintenance) {
        this.deadlineNanos = deadlineNanos;
        this.maintenance = maintenance;
    }

    /** A call for the limiter's own work, which no caller waits on and stats do not count. */
    static DecisionCall maintenance(long deadlineNanos) {
        return new DecisionCall(deadlineNanos, true);
    }

    void enter(int p) {
        phase = p;
    }

    /** Sent now, to be answered by {@code deadline}: the statement has its whole budget, queueing aside. */
    void sent(long deadline) {
        deadlineNanos = deadline;
        phase = SENT;
    }

    /** Whether no caller waits for this call any more (every caller of a batch). */
    boolean allAbandoned() {
        return abandoned;
    }

    /** The statement's own limit: the server cancels it then. */
    void sentLimit(long limit) {
        sentLimitNanos = limit;
    }

    /**
     * Whether {@link #cancel()} reaches a statement: always for a decision sent alone; for one in a batch, only once
     * every caller of the batch stopped waiting (the others still want their decisions).
     */
    boolean cancelReachesStatement() {
        DecisionCall b = inBatch;
        return b == null || b.allAbandoned();
    }

    /**
     * The attempt sends {@code st} on {@code c} now (after this, the attempt checks that its callers still wait, so
     * that a caller who stops waiting either finds the statement here to cancel, or is seen and nothing is sent).
     */
    synchronized void sending(Connection c, Statement st) {
        connection = c;
        statement = st;
    }

    /**
     * The attempt is over and its connection goes back to the pool: from now on no cancel is sent for it. A cancel on
     * its way finishes first (this waits for it), so that it cannot reach the connection's next statement, someone
     * else's.
     */
    synchronized void attemptEnded() {
        connection = null;
        statement = null;
    }

    /**
     * Sends the server one cancel for the statement under way, if there is one, and says whether there was: the
     * caller sends it again until there is none (see {@link CallerWait}). A batch's statement is cancelled once the
     * last of its callers stopped waiting.
     */
    boolean cancel() {
        DecisionCall b = inBatch;
        if (b != null) {
            return b.allAbandoned() && b.cancel();
        }
        return cancelStatement();
    }

    private synchronized boolean cancelStatement() {
        Statement st = statement;
        Connection c = connection;
        if (st == null || c == null) {
            return false; // not sent (and never will be: its attempt checks its callers after sending()), or over
        }
        try {
            JdbcAttempt.cancel(c, st);
        } catch (SQLException | RuntimeException e) {
            // the statement ended meanwhile, or the connection broke: the attempt ends too
        }
        return true;
    }

    int phase() {
        return phase;
    }
}
