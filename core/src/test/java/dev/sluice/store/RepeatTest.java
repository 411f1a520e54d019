package dev.sluice.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Repeat} on a {@link ManualScheduler}: each run comes when the wait the last one asked for has passed. */
class RepeatTest {
    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final ManualScheduler scheduler = ManualScheduler.on(ticker);

    @Test
    void eachRunComesTheWaitItsPredecessorAskedForAfterItAndNoneAfterNull() {
        List<Long> ranAt = new ArrayList<>();
        Duration[] waits = {Duration.ofSeconds(1), Duration.ofSeconds(2), null};
        Repeat r = new Repeat(scheduler, "test", Runnable::run, () -> {
            ranAt.add(ticker.read());
            return waits[ranAt.size() - 1];
        });
        long start = ticker.read();
        r.after(Duration.ofMillis(500));
        scheduler.advance(Duration.ofMillis(499));
        assertThat(ranAt).isEmpty();
        scheduler.advance(Duration.ofHours(1));
        assertThat(ranAt)
                .containsExactly(
                        start + Duration.ofMillis(500).toNanos(),
                        start + Duration.ofMillis(1_500).toNanos(),
                        start + Duration.ofMillis(3_500).toNanos());
        assertThat(scheduler.pending()).as("null: no run follows").isZero();
    }

    @Test
    void closeCancelsTheNextRun() {
        List<Long> ranAt = new ArrayList<>();
        Repeat r = new Repeat(scheduler, "test", Runnable::run, () -> {
            ranAt.add(ticker.read());
            return Duration.ofSeconds(1);
        });
        r.now();
        assertThat(ranAt).hasSize(1);
        assertThat(scheduler.pending()).isEqualTo(1);
        r.close(Duration.ZERO);
        assertThat(scheduler.pending()).isZero();
        scheduler.advance(Duration.ofMinutes(1));
        assertThat(ranAt).hasSize(1);
        r.after(Duration.ZERO);
        scheduler.runDue();
        assertThat(ranAt).as("closed: nothing runs any more").hasSize(1);
    }

    @Test
    void runsGoToADaemonThreadOfTheSchedulersFactoryWhichEndsWithTheLastRunOrOnClose() throws Exception {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        Repeat once = new Repeat(scheduler, "repeat-test", null, () -> {
            ranOn.set(Thread.currentThread());
            ran.countDown();
            return null;
        });
        once.now();
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        Thread t = ranOn.get();
        assertThat(t.getName()).startsWith("sluice-repeat-test-");
        assertThat(t.isDaemon()).isTrue();
        t.join(10_000); // the hang guard: no run follows, so the thread ends
        assertThat(t.isAlive()).isFalse();

        CountDownLatch running = new CountDownLatch(1);
        AtomicReference<Thread> blocked = new AtomicReference<>();
        Repeat hanging = new Repeat(scheduler, "repeat-test", null, () -> {
            blocked.set(Thread.currentThread());
            running.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                return Duration.ofSeconds(1); // asks for another run, which close() refuses
            }
            return null;
        });
        hanging.now();
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        hanging.close(Duration.ZERO);
        blocked.get().join(10_000);
        assertThat(blocked.get().isAlive())
                .as("close() interrupted the run and ended the thread")
                .isFalse();
        assertThat(scheduler.pending()).isZero();
    }
}
