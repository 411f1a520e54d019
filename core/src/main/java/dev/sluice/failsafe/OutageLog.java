package dev.sluice.failsafe;

import dev.sluice.Degradation;
import dev.sluice.Ticker;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * What a store's outage writes to the log: one line when the store starts failing, one when it answers again,
 * and in between one line when the cause changes (an outage that turns out to be a rotated password) and at most
 * one reminder every {@link #REMINDER}. A store down for a minute is thus three or four lines, however many
 * decisions, probes and reopening attempts it failed meanwhile (the reminder counts them).
 *
 * <p>One per {@link FailSafeRateLimiter}, shared by its {@link StoreOpener} (a store that cannot be opened) and its
 * {@link Circuit} (a store that stopped answering), so that the two never tell the same outage twice. Time is the
 * limiter's {@link Ticker}; lines go to a sink, by default the {@code System.Logger} of {@code FailSafeRateLimiter}
 * off the calling thread.
 */
final class OutageLog {
    /** The least time between two lines about the same outage and the same cause. */
    static final Duration REMINDER = Duration.ofSeconds(30);

    private static final long REMINDER_NANOS = REMINDER.toNanos();

    private final Ticker ticker;
    private final FailurePolicy policy;
    private final BiConsumer<Level, String> sink;
    /** Null while the store is healthy. */
    private @Nullable Degradation cause;

    private long downSince;
    private long lastLineAt;
    private long failuresSinceLine;

    OutageLog(Ticker ticker, FailurePolicy policy, BiConsumer<Level, String> sink) {
        this.ticker = ticker;
        this.policy = policy;
        this.sink = sink;
    }

    /**
     * The store failed again (an attempt to open it, a call, a probe) with {@code cause}: the first failure of an
     * outage and a change of cause are written, further ones only as a reminder once {@link #REMINDER} has passed.
     *
     * @param detail the failure's message (names the store and what to do)
     * @param retry  what happens next, e.g. "probing every 200 ms"
     */
    synchronized void failing(Degradation cause, @Nullable String detail, String retry) {
        long now = ticker.read();
        if (this.cause == null) {
            this.cause = cause;
            downSince = now;
            line(
                    Level.WARNING,
                    now,
                    "store failing (" + cause.label() + "): decisions follow " + policy + " until it answers; " + retry
                            + ". Cause: " + detail);
        } else if (this.cause != cause) {
            Degradation was = this.cause;
            this.cause = cause;
            line(
                    Level.WARNING,
                    now,
                    "store now failing (" + cause.label() + ", was " + was.label() + "): decisions follow " + policy
                            + "; " + retry + ". Cause: " + detail);
        } else if (now - lastLineAt >= REMINDER_NANOS) {
            line(
                    Level.WARNING,
                    now,
                    "store still failing (" + cause.label() + ") for " + words(now - downSince)
                            + ", " + (failuresSinceLine + 1) + " failure(s) since the last line: decisions follow "
                            + policy
                            + "; " + retry + ". Cause: " + detail);
        } else {
            failuresSinceLine++;
        }
    }

    /** The store answers (or opened): one line if it was failing. */
    synchronized void recovered(String what) {
        if (cause == null) {
            return;
        }
        long now = ticker.read();
        Degradation was = cause;
        cause = null;
        line(
                Level.INFO,
                now,
                what + " after " + words(now - downSince) + " (was degraded: " + was.label()
                        + "): decisions come from it again");
    }

    /** The cause of the outage under way, or null when the store is healthy. */
    synchronized @Nullable Degradation cause() {
        return cause;
    }

    private void line(Level level, long now, String text) {
        lastLineAt = now;
        failuresSinceLine = 0;
        sink.accept(level, text);
    }

    /** A duration as an operator reads it: 850 ms, 12 s, 3 min 20 s. */
    static String words(long nanos) {
        long ms = Math.max(0, nanos) / 1_000_000;
        if (ms < 1000) {
            return ms + " ms";
        }
        long s = ms / 1000;
        return s < 60 ? s + " s" : s / 60 + " min" + (s % 60 == 0 ? "" : " " + s % 60 + " s");
    }
}
