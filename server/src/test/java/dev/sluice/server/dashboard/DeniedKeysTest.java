package dev.sluice.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import dev.sluice.server.dashboard.DeniedKeys.KeyCount;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class DeniedKeysTest {
    /** 2026-01-01T00:00:00Z: the start of a 10-second step. */
    static final long T0 = 1_767_225_600L * 1_000_000_000L;

    final ManualTicker clock = ManualTicker.atEpochNanos(T0);

    @Test
    void theHotKeyComesFirstWithItsExactCount() {
        DeniedKeys d = new DeniedKeys(clock);
        Random r = new Random(1);
        for (int i = 0; i < 50_000; i++) {
            d.record(
                    i % 4 == 0
                            ? "shop|user=hot"
                            : i % 4 == 1 ? "shop|user=warm-" + r.nextInt(3) : "shop|user=" + r.nextInt(1_000_000));
        }
        DeniedKeys.Top top = d.top(5);
        assertThat(top.denials()).isEqualTo(50_000);
        assertThat(top.keys().get(0)).isEqualTo(new KeyCount("shop|user=hot", 12_500, 12_500, 12_500));
        assertThat(top.keys().subList(1, 4))
                .extracting(KeyCount::key)
                .containsExactlyInAnyOrder("shop|user=warm-0", "shop|user=warm-1", "shop|user=warm-2");
        for (KeyCount k : top.keys()) {
            assertThat(k.lower()).isLessThanOrEqualTo(k.count());
            assertThat(k.upper()).isGreaterThanOrEqualTo(k.count());
        }
    }

    @Test
    void memoryIsBoundedUnderAMillionDistinctKeys() {
        DeniedKeys d = new DeniedKeys(clock);
        for (int i = 0; i < 1_000_000; i++) {
            d.record("api|remote_address=10." + (i >> 16) + '.' + ((i >> 8) & 255) + '.' + (i & 255));
            if (i % 10 == 0) {
                d.record("api|remote_address=198.51.100.7");
            }
            if (i % 100_000 == 0) {
                clock.advance(Duration.ofSeconds(1)); // across steps too
            }
        }
        assertThat(d.trackedKeys())
                .isLessThanOrEqualTo(d.capacity())
                .isLessThanOrEqualTo(DeniedKeys.MAX_STRIPES * DeniedKeys.STEPS * DeniedKeys.DEFAULT_COUNTERS);
        DeniedKeys.Top top = d.top(3);
        assertThat(top.denials()).isEqualTo(1_100_000);
        assertThat(top.keys().get(0))
                .isEqualTo(new KeyCount("api|remote_address=198.51.100.7", 100_000, 100_000, 100_000));
    }

    @Test
    void longKeysAreKeptCut() {
        DeniedKeys d = new DeniedKeys(clock);
        String longKey = "shop|user=" + "x".repeat(5000);
        d.record(longKey);
        d.record(longKey);
        KeyCount k = d.top(1).keys().get(0);
        assertThat(k.key()).hasSize(DeniedKeys.MAX_KEY_CHARS + 1).endsWith("x…").startsWith("shop|user=xxx");
        assertThat(k.count()).isEqualTo(2);
        // a cut never splits a surrogate pair
        String emoji = "shop|user=" + "x".repeat(DeniedKeys.MAX_KEY_CHARS - 11) + "\uD83D\uDE00\uD83D\uDE00";
        assertThat(DeniedKeys.cut(emoji)).endsWith("x…");
        d.record(null); // nothing to count: ignored
        assertThat(d.top(5).denials()).isEqualTo(2);
    }

    @Test
    void aDenialAgesOutWithinAMinute() {
        DeniedKeys d = new DeniedKeys(clock);
        d.record("early"); // at the start of a step: counted for 60 s
        clock.advance(Duration.ofMillis(9_999));
        d.record("late"); // at the end of the same step: counted for 50 s from now
        clock.advance(Duration.ofSeconds(40)); // T0 + 49.999 s
        assertThat(d.top(5).keys()).extracting(KeyCount::key).containsExactlyInAnyOrder("early", "late");
        clock.advance(Duration.ofSeconds(10)); // T0 + 59.999 s: the step began 59.999 s ago
        assertThat(d.top(5).keys()).extracting(KeyCount::key).containsExactlyInAnyOrder("early", "late");
        clock.advance(Duration.ofMillis(1)); // T0 + 60 s
        assertThat(d.top(5).keys()).isEmpty();
        assertThat(d.top(5).denials()).isZero();

        d.record("again"); // reuses the first step's slot: nothing of it comes back
        assertThat(d.top(5).keys()).containsExactly(new KeyCount("again", 1, 1, 1));
        clock.advance(Duration.ofMinutes(10));
        assertThat(d.top(5).keys()).isEmpty();
    }

    @Test
    void stepsInTheWindowAddUp() {
        DeniedKeys d = new DeniedKeys(clock);
        for (int s = 0; s < 6; s++) {
            d.record("k");
            clock.advance(Duration.ofSeconds(10));
        }
        // now T0 + 60 s: the first step is gone, the five after it remain
        assertThat(d.top(1).keys()).containsExactly(new KeyCount("k", 5, 5, 5));
    }

    @Test
    void concurrentDenialsAreAllCounted() throws Exception {
        DeniedKeys d = new DeniedKeys(clock, DeniedKeys.DEFAULT_COUNTERS, 4);
        int threads = 4;
        int perThread = 250_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean done = new AtomicBoolean();
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                writers.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        d.record(i % 2 == 0 ? "hot" : "k" + r.nextInt(100_000));
                    }
                    return null;
                }));
            }
            Future<Integer> reader = pool.submit(() -> {
                start.await();
                int reads = 0;
                while (!done.get()) {
                    DeniedKeys.Top top = d.top(3);
                    if (top.keys().size() == 3) {
                        assertThat(top.keys().get(0).key()).isEqualTo("hot");
                    }
                    reads++;
                }
                return reads;
            });
            start.countDown();
            for (Future<?> w : writers) {
                w.get();
            }
            done.set(true);
            assertThat(reader.get()).isPositive();
        } finally {
            pool.shutdownNow();
        }
        DeniedKeys.Top top = d.top(1);
        assertThat(top.denials()).as("no denial lost").isEqualTo((long) threads * perThread);
        // in every stripe the hot key is half of what it sees: never the smallest, never evicted, so exact
        assertThat(top.keys().get(0))
                .isEqualTo(
                        new KeyCount("hot", threads * perThread / 2, threads * perThread / 2, threads * perThread / 2));
    }

    @Test
    void recordingAllocatesNothing() {
        DeniedKeys d = new DeniedKeys(clock);
        String[] keys = new String[10_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "shop|user=" + i;
            int unused = keys[i].hashCode(); // computed and cached now, as a long-lived key's is
        }
        for (int i = 0; i < 200_000; i++) {
            d.record(keys[i % 3 == 0 ? 0 : i % keys.length]);
        }
        long allocated = Long.MAX_VALUE;
        for (int round = 0; round < 3; round++) { // the least of a few rounds: the JIT may allocate once in a while
            long before = SpaceSavingTest.allocatedBytes();
            for (int i = 0; i < 200_000; i++) {
                d.record(keys[i % 3 == 0 ? 0 : i % keys.length]);
            }
            allocated = Math.min(allocated, SpaceSavingTest.allocatedBytes() - before);
        }
        assertThat(allocated)
                .as("bytes allocated by 200,000 denials")
                .isLessThan(16 * 1024); // reading the counter costs ~2 KB; one object per call would be ≥ 3 MB
    }
}
