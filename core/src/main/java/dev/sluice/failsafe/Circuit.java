package dev.sluice.failsafe;

import dev.sluice.Degradation;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import java.lang.System.Logger.Level;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Whether the store is asked: closed (every call goes to the store) or open (calls go to the policy, except one
 * probe per interval).
 *
 * <p>After {@value #FAILURES_TO_OPEN} consecutive failures whose cause puts the store's health in doubt
 * ({@link Degradation#storeUnhealthy()}: a timeout or an unreachable store) the circuit opens; a misconfiguration
 * (the store refused this client's credentials or privileges) opens it at once, since no second try will differ. A
 * failed probe keeps it open for another interval; the first success closes it. A failure that says nothing about
 * the store's health (a script failing on one key's foreign data, an overloaded client) is not counted. Lock-free:
 * the probe is claimed by one compare-and-set on its due time, so racing callers send exactly one probe per
 * interval. Opening, each failed probe and closing are told to the {@link OutageLog}, which decides what is written.
 */
final class Circuit {

    /** Consecutive unhealthy failures that open the circuit: one lost packet should not. */
    static final int FAILURES_TO_OPEN = 3;

    private static final System.Logger LOG = System.getLogger(FailSafeRateLimiter.class.getName());

    private final OutageLog outages;
    private final long probeIntervalNanos;
    private final Ticker ticker;
    private final AtomicInteger consecutiveFailures = new AtomicInteger();
    private final AtomicLong nextProbeAt = new AtomicLong();
    /** Null while the circuit is closed; otherwise the cause that opened it. */
    private volatile @Nullable Degradation openCause;

    Circuit(long probeIntervalNanos, Ticker ticker, OutageLog outages, @Nullable Degradation openCause) {
        this.probeIntervalNanos = probeIntervalNanos;
        this.ticker = ticker;
        this.outages = outages;
        this.openCause = openCause;
    }

    /** Whether this call may ask the store: the circuit is closed, or this call claimed the interval's probe. */
    boolean allowsCall() {
        if (openCause == null) {
            return true;
        }
        long now = ticker.read();
        long due = nextProbeAt.get();
        return now - due >= 0 && nextProbeAt.compareAndSet(due, now + probeIntervalNanos);
    }

    boolean isClosed() {
        return openCause == null;
    }

    /** {@link Degradation#NONE} while the circuit is closed, else the cause that opened it (or holds it open). */
    Degradation state() {
        Degradation c = openCause;
        return c == null ? Degradation.NONE : c;
    }

    /** The cause decisions are degraded for while the circuit is open ({@code UNAVAILABLE} when it is not). */
    Degradation cause() {
        Degradation c = openCause;
        return c == null ? Degradation.UNAVAILABLE : c;
    }

    /** The store answered: reset the count and close the circuit if it was open. */
    void succeeded() {
        if (consecutiveFailures.get() != 0) {
            consecutiveFailures.set(0);
        }
        if (openCause != null) {
            openCause = null;
            outages.recovered("store answers again");
        }
    }

    /**
     * Read once here: the first question to a logger initializes the logging backend (milliseconds), which a
     * decision at the end of its budget must not pay.
     */
    private final boolean debug = LOG.isLoggable(Level.DEBUG);

    /**
     * Classifies what a store call failed with (a {@link StoreException}'s cause, {@code STORE_ERROR} for anything
     * else) and counts it; the caller's own mistakes propagate.
     */
    Degradation failed(Throwable thrown) {
        Throwable e = thrown;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof IllegalArgumentException
                || e instanceof UnsupportedOperationException
                || e instanceof NullPointerException) {
            throw (RuntimeException) e; // the caller's mistake, not the store's
        }
        Degradation cause = e instanceof StoreException se ? se.degradation() : Degradation.STORE_ERROR;
        failed(cause, e.getMessage());
        if (!cause.storeUnhealthy() && debug) {
            logOffThePath(Level.DEBUG, "store could not decide one call (" + cause.label() + "): " + e.getMessage());
        }
        return cause;
    }

    /** The store failed a call with {@code cause}; opens the circuit when that is the last straw. */
    void failed(Degradation cause, @Nullable String message) {
        if (!cause.storeUnhealthy()) {
            return;
        }
        boolean probe = openCause != null;
        if (probe || consecutiveFailures.incrementAndGet() >= FAILURES_TO_OPEN || cause == Degradation.MISCONFIGURED) {
            nextProbeAt.set(ticker.read() + probeIntervalNanos);
            openCause = cause;
            outages.failing(cause, message, "one call tries it every " + OutageLog.words(probeIntervalNanos));
        }
    }

    /** The store (re)opened: closed, nothing counted. */
    void reset() {
        consecutiveFailures.set(0);
        openCause = null;
    }

    /** The store could not be opened: open, for {@code cause}. */
    void holdOpen(Degradation cause) {
        openCause = cause;
    }

    /**
     * Logs on the common pool, not on the deciding thread: a log handler writing to a slow pipe must not push a
     * decision past its budget (and an async decision completes on a shared timer thread).
     */
    static void logOffThePath(Level level, String message) {
        ForkJoinPool.commonPool().execute(() -> LOG.log(level, message));
    }
}
