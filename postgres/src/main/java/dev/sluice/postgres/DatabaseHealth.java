package dev.sluice.postgres;

import dev.sluice.Degradation;

/**
 * How the database was last seen, and when it last answered. {@code NONE} after a statement succeeded,
 * {@code TIMEOUT} or {@code UNAVAILABLE} after one failed so. A decision that could not even be sent (no worker, no
 * pooled connection, no queue slot) is {@code OVERLOADED} while the database is healthy, but when it is down or
 * paused those waits are its symptom, and the decision carries the database's cause instead. And a caller whose
 * decision waits in a queue or behind a row lock keeps waiting while the database {@linkplain #answering answers}.
 */
final class DatabaseHealth {
    private volatile Degradation lastSeen = Degradation.NONE;
    private volatile long lastAnswerNanos = System.nanoTime();

    /** A statement was answered just now. */
    void answered() {
        lastAnswerNanos = System.nanoTime();
        seen(Degradation.NONE);
    }

    /** Records how the database was seen. */
    void seen(Degradation d) {
        if (lastSeen != d) {
            lastSeen = d;
        }
    }

    Degradation lastSeen() {
        return lastSeen;
    }

    /** Whether the database answered a statement within the last {@code budgetNanos} and none failed since. */
    boolean answering(long nowNanos, long budgetNanos) {
        return lastSeen == Degradation.NONE && nowNanos - lastAnswerNanos < budgetNanos;
    }
}
