package dev.sluice.tck;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The one wait of Sluice's tests for what no seam can hurry: another process (a redis-server or PostgreSQL starting or
 * stopping, a spawned {@code sluice serve} printing its banner, a client's reconnection on its own schedule) or real
 * work on a real thread. It asks a condition again and again, parking a few milliseconds in between, until it holds
 * or the hang guard has passed; the guard is not a budget the test asserts on (give at least 10× what the wait takes
 * and at least 1 s), and the failure says what was awaited. Where the code under test has the {@code Scheduler} or
 * {@code Ticker} seam, a test advances a {@code ManualScheduler} or a {@code ManualTicker} instead.
 */
public final class Eventually {
    /** The park between two asks: short, so a met condition is seen soon, and not a spin. */
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private Eventually() {}

    /** A condition that may fail to be asked (an HTTP call, a query): its exception fails the wait at once. */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /**
     * Returns once {@code condition} holds; fails with an {@link AssertionError} naming {@code what} once
     * {@code hangGuard} has passed without it.
     *
     * @throws IllegalArgumentException a hang guard under 1 s: it would turn a busy machine into a failure
     */
    public static void await(Duration hangGuard, String what, Condition condition) {
        Objects.requireNonNull(what, "what must not be null: say what is awaited");
        Objects.requireNonNull(condition, "condition must not be null");
        if (hangGuard.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException(
                    "hang guard " + hangGuard + " is under 1 s: give at least 10 times what the wait takes, e.g. 10 s");
        }
        long deadline = System.nanoTime() + hangGuard.toNanos();
        while (true) {
            try {
                if (condition.holds()) {
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while awaiting " + what, e);
            } catch (Exception e) {
                throw new AssertionError("asking whether " + what + " failed", e);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not seen within the hang guard of " + hangGuard + ": " + what);
            }
            LockSupport.parkNanos(PARK_NANOS);
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while awaiting " + what);
            }
        }
    }
}
