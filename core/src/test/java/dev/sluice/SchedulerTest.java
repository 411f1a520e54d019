package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SchedulerTest {

    private static final long START = 1_700_000_000_000_000_000L;

    @Test
    void aManualSchedulerRunsDueTasksInOrderEachAtItsInstantOnTheCallersThread() {
        ManualTicker ticker = ManualTicker.atEpochNanos(START);
        ManualScheduler scheduler = ManualScheduler.on(ticker);
        List<String> ran = new ArrayList<>();
        Thread caller = Thread.currentThread();
        scheduler.schedule(Duration.ofMillis(30), () -> ran.add("c@" + (ticker.read() - START) / 1_000_000));
        scheduler.schedule(Duration.ofMillis(10), () -> {
            assertThat(Thread.currentThread()).isSameAs(caller);
            ran.add("a@" + (ticker.read() - START) / 1_000_000);
            // scheduled by a task: due within the same advance, so it runs in it
            scheduler.schedule(Duration.ofMillis(5), () -> ran.add("b@" + (ticker.read() - START) / 1_000_000));
        });
        Scheduler.Cancellable never = scheduler.schedule(Duration.ofMillis(20), () -> ran.add("cancelled"));
        assertThat(never.cancel()).isTrue();
        assertThat(never.cancel()).as("once").isFalse();
        scheduler.advance(Duration.ofMillis(29));
        assertThat(ran).containsExactly("a@10", "b@15");
        assertThat(ticker.read() - START).isEqualTo(29_000_000);
        scheduler.advance(Duration.ofMillis(1));
        assertThat(ran).containsExactly("a@10", "b@15", "c@30");
        assertThat(scheduler.pending()).isZero();
    }

    @Test
    void executeRunsOnTheNextAdvanceWithoutMovingTime() {
        ManualScheduler scheduler = ManualScheduler.on(ManualTicker.atEpochNanos(START));
        List<Integer> ran = new ArrayList<>();
        scheduler.execute(() -> ran.add(1));
        scheduler.execute(() -> ran.add(2));
        assertThat(ran).isEmpty();
        scheduler.runDue();
        assertThat(ran).containsExactly(1, 2);
        assertThat(scheduler.ticker().read()).isEqualTo(START);
    }

    @Test
    void aNegativeDelayIsRefusedWithTheFix() {
        ManualScheduler scheduler = ManualScheduler.on(ManualTicker.atEpochNanos(START));
        assertThatThrownBy(() -> scheduler.schedule(Duration.ofMillis(-1), () -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT-0.001S")
                .hasMessageContaining("zero or more");
    }

    @Test
    void theSystemSchedulersThreadsAreNamedDaemonsAndItsTasksRun() throws Exception {
        Thread t = Scheduler.system().threadFactory("postgres-batch").newThread(() -> {});
        assertThat(t.getName()).isEqualTo("sluice-postgres-batch-1");
        assertThat(t.isDaemon()).isTrue();
        CountDownLatch ran = new CountDownLatch(2);
        Scheduler.Cancellable unused = Scheduler.system().schedule(Duration.ZERO, ran::countDown);
        Scheduler.system().execute(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        Thread given = new Thread(() -> {});
        assertThat(Scheduler.system(r -> given).threadFactory("x").newThread(() -> {}))
                .as("the application's factory")
                .isSameAs(given);
    }
}
