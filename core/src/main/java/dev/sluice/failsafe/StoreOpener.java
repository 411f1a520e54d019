package dev.sluice.failsafe;

import dev.sluice.Degradation;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Opens a store from a {@link Supplier} on its own daemon thread ({@code sluice-store-opener}), again every pause
 * until it returns one, and lets the builder wait for the first attempt.
 *
 * <p>The first attempt is what makes the first decision over a healthy store the store's own: the builder waits
 * for it up to a startup wait. A failing attempt ends the wait at once (a refused connection says all there is to
 * say), and so the price of starting beside a dead store is one failed attempt, or at most the startup wait for a
 * store that neither answers nor refuses.
 */
final class StoreOpener {

    private static final System.Logger LOG = System.getLogger(FailSafeRateLimiter.class.getName());

    private final Supplier<? extends RateLimiter> supplier;
    private final long pauseMillis;
    private final FailurePolicy policy;
    private final Predicate<RateLimiter> install;
    private final Consumer<Degradation> onFailure;
    /** Counted down when the first attempt has returned or thrown. */
    private final CountDownLatch firstAttempt = new CountDownLatch(1);
    private final Thread thread;

    /**
     * @param install takes the opened store, or returns false when the limiter was closed meanwhile (the store is
     *                then closed here)
     * @param onFailure told the cause of each failed attempt
     */
    StoreOpener(Supplier<? extends RateLimiter> supplier, Duration pause, FailurePolicy policy,
                Predicate<RateLimiter> install, Consumer<Degradation> onFailure) {
        this.supplier = supplier;
        this.pauseMillis = Math.max(1, pause.toMillis());
        this.policy = policy;
        this.install = install;
        this.onFailure = onFailure;
        this.thread = new Thread(this::run, "sluice-store-opener");
        thread.setDaemon(true);
    }

    /** Starts opening and waits, up to {@code wait}, for the first attempt; an interrupt ends the wait early. */
    void start(Duration wait) {
        thread.start();
        try {
            if (!firstAttempt.await(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                LOG.log(Level.WARNING, "the store did not open within the startup wait of " + wait.toMillis()
                        + " ms: decisions follow " + policy + " until it does (it keeps opening in the background)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops opening; a store opened meanwhile is closed by {@code install}'s refusal. */
    void stop() {
        thread.interrupt();
    }

    private void run() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                RateLimiter s = supplier.get();
                if (install.test(s)) {
                    LOG.log(Level.INFO, "store opened: decisions come from it");
                } else {
                    s.close();
                }
                firstAttempt.countDown();
                return;
            } catch (RuntimeException e) {
                Degradation cause = e instanceof StoreException se && se.degradation().storeUnhealthy()
                        ? se.degradation() : Degradation.UNAVAILABLE;
                onFailure.accept(cause);
                firstAttempt.countDown();
                LOG.log(Level.WARNING, "cannot open the store (" + e.getMessage() + "): decisions follow " + policy
                        + "; retrying every " + pauseMillis + " ms");
            }
            try {
                Thread.sleep(pauseMillis);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
