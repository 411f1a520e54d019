package dev.sluice.failsafe;

import dev.sluice.Degradation;
import dev.sluice.RateLimiter;
import dev.sluice.Scheduler;
import dev.sluice.StoreException;
import dev.sluice.store.ReconnectBackoff;
import dev.sluice.store.Repeat;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Opens a store from a {@link Supplier}, again after each failure until it returns one, and lets the builder wait for
 * the first attempt. An attempt blocks (it connects and warms up), so it runs on a daemon thread of the
 * {@link Scheduler}'s factory ({@code sluice-store-opener-<n>}, which ends once the store opened); the wait before the
 * next attempt is the scheduler's ({@link Repeat}), so that a test advancing a {@link dev.sluice.ManualScheduler}
 * steps the opener one attempt at a time.
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
    /** The attempts, one after the other, on the opener's own thread or (tests) where the test said. */
    private final Repeat attempts;
    /** Counted down when the first attempt has returned or thrown. */
    private final CountDownLatch firstAttempt = new CountDownLatch(1);
    /** True while the builder still waits for the first attempt; whoever clears it decides what the attempt means. */
    private final AtomicBoolean builderWaits = new AtomicBoolean(true);
    /** The misconfiguration the first attempt met, for the builder to throw. */
    private volatile @Nullable RuntimeException refusedAtStart;

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
        this.attempts = new Repeat(scheduler, "store-opener", attempts, this::attempt);
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
        attempts.now();
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
        attempts.close(Duration.ZERO);
    }

    /** One attempt: installs the store, or notes the failure; returns the wait before the next, if there is one. */
    private @Nullable Duration attempt() {
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
            return null;
        } catch (RuntimeException e) {
            Degradation cause = causeOf(e);
            if (cause == Degradation.MISCONFIGURED
                    && !startDespiteMisconfiguration
                    && builderWaits.compareAndSet(true, false)) {
                refusedAtStart = e; // the builder throws it: an application must not start on a typo
                firstAttempt.countDown();
                return null;
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
        return Duration.ofNanos(waitNanos);
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
