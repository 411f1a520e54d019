package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.InMemoryRateLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link Ticker#coarse(Duration, Scheduler)} on a {@link ManualScheduler}: the reading moves when the scheduler's task
 * runs, not when the clock does, and the task stops once the ticker is gone. Nothing sleeps.
 */
class CoarseTickerTest {

    private final ManualTicker clock = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final ManualScheduler scheduler = ManualScheduler.on(clock);

    @Test
    void readingsFollowTheSchedulersClockOnceEveryResolutionAndNeverDecrease() {
        Ticker coarse = Ticker.coarse(Duration.ofMillis(1), scheduler);
        long start = clock.read();
        assertThat(coarse.read())
                .as("starts at the clock's reading, not at zero")
                .isEqualTo(start);
        clock.advance(Duration.ofMillis(5));
        assertThat(coarse.read()).as("the clock moved, the task has not run").isEqualTo(start);
        long last = coarse.read();
        for (int i = 0; i < 20; i++) {
            scheduler.advance(Duration.ofMillis(1));
            long now = coarse.read();
            assertThat(now).as("the task ran and read the clock").isEqualTo(clock.read());
            assertThat(now).isGreaterThan(last);
            last = now;
        }
        scheduler.advance(Duration.ofNanos(999_999));
        assertThat(coarse.read()).as("not before the next resolution").isEqualTo(last);
        assertThat(coarse.read()).as("never ahead of the exact clock").isLessThanOrEqualTo(clock.read());
    }

    @Test
    void theDefaultStartsAtTheSystemClockAndIsNeverAheadOfIt() {
        Ticker coarse = Ticker.coarse(Duration.ofMillis(1));
        long before = Ticker.system().read();
        assertThat(coarse.read())
                .as("starts at the system clock's reading, not at zero")
                .isBetween(before - Duration.ofSeconds(1).toNanos(), before);
        assertThat(coarse.read()).isLessThanOrEqualTo(Ticker.system().read());
    }

    @Test
    void aLimiterOnACoarseTickerDecidesByItsReadings() {
        Ticker coarse = Ticker.coarse(Duration.ofSeconds(1), scheduler);
        InMemoryRateLimiter limiter =
                InMemoryRateLimiter.builder().ticker(coarse).build();
        BoundLimit b = limiter.bind("coarse", Limit.tokenBucket(3, Rate.perHour(1)));
        assertThat(b.tryAcquirePermits(3)).isTrue();
        clock.advance(Duration.ofMillis(900)); // not read yet: the denial counts from the last reading
        Decision denied = b.tryAcquire();
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.retryAfter()).isEqualTo(Duration.ofHours(1));
        scheduler.advance(Duration.ofMillis(100));
        assertThat(b.tryAcquire().retryAfter())
                .as("the reading moved on by the second that passed")
                .isEqualTo(Duration.ofHours(1).minusSeconds(1));
    }

    @Test
    void itsTaskHoldsTheTickerOnlyWeaklyAndStopsOnceItIsGone() {
        List<Runnable> tasks = new ArrayList<>();
        Scheduler recording = new Scheduler() {
            @Override
            public Ticker ticker() {
                return clock;
            }

            @Override
            public Cancellable schedule(Duration delay, Runnable task) {
                tasks.add(task);
                return scheduler.schedule(delay, task);
            }

            @Override
            public void execute(Runnable task) {
                scheduler.execute(task);
            }

            @Override
            public java.util.concurrent.ThreadFactory threadFactory(String name) {
                return scheduler.threadFactory(name);
            }
        };
        Ticker coarse = Ticker.coarse(Duration.ofMillis(7), recording);
        assertThat(tasks).hasSize(1);
        CoarseTicker.Updater updater = (CoarseTicker.Updater) tasks.get(0);
        assertThat(updater.ticker.get())
                .as("the task's only way to the ticker is a weak reference")
                .isSameAs(coarse);
        assertThat(referencesOf(updater, coarse))
                .as("no strong field of the task holds the ticker")
                .isZero();
        scheduler.advance(Duration.ofMillis(7));
        assertThat(scheduler.pending()).as("it rescheduled itself").isEqualTo(1);
        // What a collection of the unreferenced ticker does to the weak reference, done here without asking for one:
        updater.ticker.clear();
        scheduler.advance(Duration.ofMillis(7));
        assertThat(scheduler.pending()).as("gone: nothing scheduled any more").isZero();
    }

    @Test
    void resolutionsOutsideTenMicrosecondsToOneSecondAreRefused() {
        assertThatThrownBy(() -> Ticker.coarse(Duration.ofNanos(9_999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT0.000009999S is outside");
        assertThatThrownBy(() -> Ticker.coarse(Duration.ofSeconds(2))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Ticker.coarse(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Ticker.coarse(Duration.ofMillis(1), null)).isInstanceOf(NullPointerException.class);
    }

    /** How many of {@code holder}'s own fields refer to {@code target} directly. */
    private static long referencesOf(Object holder, Object target) {
        long n = 0;
        for (java.lang.reflect.Field f : holder.getClass().getDeclaredFields()) {
            if (f.getType().isPrimitive()) {
                continue;
            }
            try {
                f.setAccessible(true);
                Object v = f.get(holder);
                if (v == target) {
                    n++;
                }
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
        return n;
    }
}
