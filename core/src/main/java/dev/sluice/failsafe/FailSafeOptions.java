package dev.sluice.failsafe;

import dev.sluice.Degradation;
import dev.sluice.RateLimiter;
import dev.sluice.Scheduler;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The options of a {@link FailSafeRateLimiter.Builder}, kept apart from the limiter (its only subclass is that
 * builder, through which they are set: {@code FailSafeRateLimiter.builder(store).policy(FAIL_CLOSED).build()}).
 */
abstract class FailSafeOptions<B extends FailSafeOptions<B>> {
    FailurePolicy policy = FailurePolicy.FAIL_OPEN;
    Duration probeInterval = Duration.ofMillis(200);
    Duration startupWait = Duration.ofSeconds(FailSafeRateLimiter.DEFAULT_STARTUP_WAIT_SECONDS);

    @Nullable
    Ticker ticker;

    Scheduler scheduler = Scheduler.system();

    @Nullable
    RateLimiter fallback;

    boolean startDespiteMisconfiguration;

    @Nullable
    Executor attempts;

    BiConsumer<Level, String> logSink = Circuit::logOffThePath;

    abstract B self();

    /** What decides when the store cannot; default {@link FailurePolicy#FAIL_OPEN}. */
    public B policy(FailurePolicy policy) {
        this.policy = Objects.requireNonNull(
                policy, "policy must not be null: FAIL_OPEN, FAIL_CLOSED or" + " FALLBACK_LOCAL");
        return self();
    }

    /**
     * While the store is unhealthy, at most one call per interval tries it (and the supplier is retried
     * at this pace); default 200 ms, from 1 ms to 1 minute. It bounds how long decisions stay degraded
     * after the store is back.
     */
    public B probeInterval(Duration interval) {
        Objects.requireNonNull(interval, "probeInterval must not be null");
        if (interval.compareTo(Duration.ofMillis(1)) < 0 || interval.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException("probeInterval " + interval
                    + " is out of range: use 1 ms to 1 minute, such as Duration.ofMillis(200)");
        }
        this.probeInterval = interval;
        return self();
    }

    /**
     * For a limiter built from a supplier: how long {@code build()} waits for the supplier's first attempt
     * before it returns and leaves the store to open in the background; default
     * {@value FailSafeRateLimiter#DEFAULT_STARTUP_WAIT_SECONDS} s, from zero (never wait: the first decisions
     * are degraded until the store opens) to 1 minute.
     */
    public B startupWait(Duration wait) {
        Objects.requireNonNull(wait, "startupWait must not be null: use Duration.ZERO to not wait");
        if (wait.isNegative() || wait.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException(
                    "startupWait " + wait + " is out of range: use zero to 1 minute, such as Duration.ofSeconds(5)");
        }
        this.startupWait = wait;
        return self();
    }

    /**
     * The clock of the probe interval and of the default local fallback; default the {@linkplain #scheduler
     * scheduler}'s, {@link Ticker#system()}.
     */
    public B ticker(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker must not be null");
        return self();
    }

    /**
     * For a limiter built from a supplier: the time and threads of the opener (the wait before each new attempt
     * and the daemon thread attempts run on, {@code sluice-store-opener-<n>}), and the clock when no
     * {@link #ticker(Ticker)} is given; default {@link Scheduler#system()}.
     */
    public B scheduler(Scheduler scheduler) {
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler must not be null: e.g. Scheduler.system()");
        return self();
    }

    Ticker ticker() {
        Ticker t = ticker;
        return t != null ? t : scheduler.ticker();
    }

    /**
     * The local limiter for {@link FailurePolicy#FALLBACK_LOCAL}; default an {@link InMemoryRateLimiter}
     * on this builder's ticker, created on first use. This limiter closes it.
     */
    public B fallback(RateLimiter fallback) {
        this.fallback = Objects.requireNonNull(fallback, "fallback must not be null");
        return self();
    }

    /**
     * Whether {@code build()} returns although the supplier's first attempt found the store misconfigured
     * (decisions are then degraded {@link Degradation#MISCONFIGURED}, the store retried 1 s to 30 s apart);
     * default false: {@code build()} throws, so that rate limiting is never silently off because of a typo.
     */
    public B startDespiteMisconfiguration(boolean start) {
        this.startDespiteMisconfiguration = start;
        return self();
    }

    /** Tests: where the opener's attempts run (null: its own thread), and where the outage lines go. */
    B seams(@Nullable Executor attempts, BiConsumer<Level, String> logSink) {
        this.attempts = attempts;
        this.logSink = Objects.requireNonNull(logSink, "logSink");
        return self();
    }
}
