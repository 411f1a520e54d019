package dev.sluice.failsafe;

import dev.sluice.Degradation;
import dev.sluice.RateLimiter;
import dev.sluice.Scheduler;
import dev.sluice.StoreException;
import dev.sluice.store.ReconnectBackoff;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Opens a store from a {@link Supplier}, again after each failure until it returns one, and lets the builder wait for
 * the first attempt. An attempt blocks (it connects and warms up), so it runs on a daemon thread of the
 * {@link Scheduler}'s factory ({@code sluice-store-opener-<n>}, which ends a second after the last attempt); the wait
 * before the next attempt is the scheduler's, so that a test advancing a {@link dev.sluice.ManualScheduler} steps the
 * opener one attempt at a time.
 *
 * <p>The first attempt is what makes the first decision over a healthy store the store's own: the builder waits
 * for it up to a startup wait. A failing attempt ends the wait at once, and what happens then depends on why:
 * <ul>
 * <li>the store is <b>misconfigured</b> ({@link Degradation#MISCONFIGURED}: a refused password, an unknown host,
 *     another protocol at that port; or an {@link IllegalArgumentException}, a URL that cannot work): the builder
 *     throws the store's exception and nothing is retried, since no retry would differ; unless it was told to start
 *     despite it;</li>
 * <li>the store is <b>unavailable</b> (down, restarting, not answering): the builder returns, decisions follow the
 *     policy, and the store is tried again every probe interval, so that a store restarting beside the
 *     application is used as soon as it is back.</li>
 * </ul>
 * A misconfiguration met later (after the startup wait, or started despite it) is retried with the
 * {@link ReconnectBackoff} (1 s doubling to 30 s), never in a login storm. The {@link OutageLog} writes one line
 * when opening starts failing, one when the store opens, and reminders in between.
 */
final class StoreOpener {

    private final Supplier<? extends RateLimiter> supplier;
    private final long probeIntervalNanos;
    private final boolean startDespiteMisconfiguration;
    private final Predicate<RateLimiter> install;
    private final Consumer<Degradation> onFailure;
    private final OutageLog outages;
    private final Scheduler scheduler;
    /** Where an attempt runs: the opener's own thread, or (tests) the thread that starts or schedules it. */
    private final Executor attempts;
    /** The opener's own thread, when {@link #attempts} is not a test's; shut down by {@link #stop()}. */
    private final @Nullable ThreadPoolExecutor ownThread;
    /** Counted down when the first attempt has returned or thrown. */
    private final CountDownLatch firstAttempt = new CountDownLatch(1);
    /** True while the builder still waits for the first attempt; whoever clears it decides what the attempt means. */
    private final AtomicBoolean builderWaits = new AtomicBoolean(true);
    /** The misconfiguration the first attempt met, for the builder to throw. */
    private volatile @Nullable RuntimeException refusedAtStart;

    private final Object lock = new Object();
    /** Set by {@link #stop()}: no attempt is scheduled after it. Guarded by {@link #lock}. */
    private boolean stopped;
    /** The next attempt, scheduled after a failure. Guarded by {@link #lock}. */
    private Scheduler.@Nullable Cancellable next;
    /** Misconfigurations in a row, for the backoff; attempts run one at a time (each schedules the next). */
    private int refusals;

    /**
     * @param install takes the opened store, or returns false when the limiter was closed meanwhile (the store is
     *                then closed here)
     * @param onFailure told the cause of each failed attempt
     * @param attempts where attempts run; null: a daemon thread of {@code scheduler}'s factory
     */
    StoreOpener(
            Supplier<? extends RateLimiter> supplier,
            Duration probeInterval,
            boolean startDespiteMisconfiguration,
            Predicate<RateLimiter> install,
            Consumer<Degradation> onFailure,
            OutageLog outages,
            Scheduler scheduler,
            @Nullable Executor attempts) {
        this.supplier = supplier;
        this.probeIntervalNanos = Math.max(1, probeInterval.toNanos());
        this.startDespiteMisconfiguration = startDespiteMisconfiguration;
        this.install = install;
        this.onFailure = onFailure;
        this.outages = outages;
        this.scheduler = scheduler;
        if (attempts != null) {
            this.ownThread = null;
            this.attempts = attempts;
        } else {
            ThreadPoolExecutor own = new ThreadPoolExecutor(
                    1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), scheduler.threadFactory("store-opener"));
            own.allowCoreThreadTimeOut(true);
            this.ownThread = own;
            this.attempts = own;
        }
    }

    /**
     * Starts opening and waits, up to {@code wait}, for the first attempt; an interrupt ends the wait early. The wait
     * is on real time: the attempt is real work on a real thread (a connection, a warm-up).
     *
     * @return null, or a line for the log when the first attempt did not end within the wait
     * @throws RuntimeException the store's own exception when the first attempt found it misconfigured (the opener
     *                          has stopped: nothing is retried)
     */
    @Nullable
    String start(Duration wait) {
        startAttempt();
        try {
            if (!firstAttempt.await(wait.toNanos(), TimeUnit.NANOSECONDS) && builderWaits.compareAndSet(true, false)) {
                return "the store did not open within the startup wait of " + OutageLog.words(wait.toNanos())
                        + ": decisions follow the failure policy until it does (it keeps opening in the background)";
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            builderWaits.set(false);
            return null;
        }
        RuntimeException refused = refusedAtStart;
        if (refused != null) {
            throw refused;
        }
        return null;
    }

    /** Stops opening: cancels the next attempt and interrupts one under way; a store it opens is closed. */
    void stop() {
        Scheduler.Cancellable n;
        synchronized (lock) {
            stopped = true;
            n = next;
            next = null;
        }
        if (n != null) {
            n.cancel();
        }
        if (ownThread != null) {
            ownThread.shutdownNow();
        }
    }

    /** Hands one attempt to its thread; after {@link #stop()} the thread refuses it, and nothing runs. */
    private void startAttempt() {
        try {
            attempts.execute(this::attempt);
        } catch (RejectedExecutionException stoppedMeanwhile) {
            // stop() shut the opener's thread down between scheduling this attempt and now
        }
    }

    /** One attempt: installs the store, or notes the failure and schedules the next attempt. */
    private void attempt() {
        synchronized (lock) {
            if (stopped) {
                return;
            }
        }
        long waitNanos;
        try {
            RateLimiter s = supplier.get();
            if (install.test(s)) {
                outages.recovered("store opened");
            } else {
                s.close();
            }
            builderWaits.set(false);
            firstAttempt.countDown();
            return;
        } catch (RuntimeException e) {
            Degradation cause = causeOf(e);
            if (cause == Degradation.MISCONFIGURED
                    && !startDespiteMisconfiguration
                    && builderWaits.compareAndSet(true, false)) {
                refusedAtStart = e; // the builder throws it: an application must not start on a typo
                firstAttempt.countDown();
                return;
            }
            builderWaits.set(false);
            refusals = cause == Degradation.MISCONFIGURED ? refusals + 1 : 0;
            waitNanos = refusals > 0 ? ReconnectBackoff.nanosAfter(refusals) : probeIntervalNanos;
            onFailure.accept(cause);
            outages.failing(
                    cause,
                    "cannot open the store: " + e.getMessage(),
                    refusals > 0
                            ? "trying again in " + OutageLog.words(waitNanos) + ", backing off to "
                                    + OutageLog.words(ReconnectBackoff.MAX.toNanos())
                            : "trying again every " + OutageLog.words(probeIntervalNanos));
            firstAttempt.countDown();
        }
        synchronized (lock) {
            if (!stopped) {
                next = scheduler.schedule(Duration.ofNanos(waitNanos), this::startAttempt);
            }
        }
    }

    /**
     * Why an attempt failed: the store's own cause when it says the store cannot serve ({@code TIMEOUT},
     * {@code UNAVAILABLE}, {@code MISCONFIGURED}), a misconfiguration for an {@link IllegalArgumentException} (a
     * setting that cannot work), else unavailable.
     */
    static Degradation causeOf(RuntimeException e) {
        if (e instanceof StoreException se && se.degradation().storeUnhealthy()) {
            return se.degradation();
        }
        return e instanceof IllegalArgumentException ? Degradation.MISCONFIGURED : Degradation.UNAVAILABLE;
    }
}
