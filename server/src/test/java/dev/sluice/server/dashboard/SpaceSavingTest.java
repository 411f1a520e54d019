package dev.sluice.server.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SpaceSavingTest {

    record Counter(String key, long count, long error) {}

    static List<Counter> counters(SpaceSaving s) {
        List<Counter> out = new ArrayList<>();
        s.forEach((k, c, e) -> out.add(new Counter(k, c, e)));
        out.sort(Comparator.comparingLong(Counter::count).reversed().thenComparing(Counter::key));
        return out;
    }

    @Test
    void countsExactlyWhileTheKeysFitTheCounters() {
        SpaceSaving s = new SpaceSaving(10);
        for (int i = 1; i <= 8; i++) {
            for (int n = 0; n < i * 3; n++) {
                s.offer("k" + i);
            }
        }
        List<Counter> c = counters(s);
        assertThat(c).hasSize(8);
        for (int i = 0; i < 8; i++) {
            assertThat(c.get(i)).isEqualTo(new Counter("k" + (8 - i), (8 - i) * 3L, 0));
        }
        assertThat(s.untrackedBound())
                .as("not full: a key not tracked was never seen")
                .isZero();
    }

    @Test
    void aNewKeyTakesOverTheSmallestCounterWithItsCountAsError() {
        SpaceSaving s = new SpaceSaving(2);
        s.offer("a");
        s.offer("a");
        s.offer("a");
        s.offer("b");
        s.offer("c"); // replaces b (count 1): c gets 2, error 1
        assertThat(counters(s)).containsExactly(new Counter("a", 3, 0), new Counter("c", 2, 1));
        assertThat(s.untrackedBound()).isEqualTo(2);
        s.offer("d"); // replaces c (count 2): d gets 3, error 2
        assertThat(counters(s)).containsExactly(new Counter("a", 3, 0), new Counter("d", 3, 2));
        assertThat(s.total()).isEqualTo(6);
    }

    /**
     * Top 10 of 100 heavy keys (key i seen 20,000/i times) among 50,000 keys seen once, shuffled: the ten are seen more
     * than n/k times, so Space-Saving keeps them, and its bounds prove the order (each one's count minus its error is
     * at least the next one's count).
     */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void exactTopTenOnASkewedStream(long seed) {
        List<String> stream = new ArrayList<>();
        Map<String, Long> truth = new HashMap<>();
        for (int i = 1; i <= 100; i++) {
            int n = 20_000 / i;
            for (int j = 0; j < n; j++) {
                stream.add("heavy-" + i);
            }
            truth.put("heavy-" + i, (long) n);
        }
        for (int i = 0; i < 50_000; i++) {
            stream.add("once-" + i);
            truth.put("once-" + i, 1L);
        }
        Collections.shuffle(stream, new Random(seed));
        SpaceSaving s = new SpaceSaving(128);
        stream.forEach(s::offer);

        List<Counter> c = counters(s);
        assertThat(c.subList(0, 10))
                .extracting(Counter::key)
                .containsExactly(
                        "heavy-1",
                        "heavy-2",
                        "heavy-3",
                        "heavy-4",
                        "heavy-5",
                        "heavy-6",
                        "heavy-7",
                        "heavy-8",
                        "heavy-9",
                        "heavy-10");
        for (int i = 0; i < 10; i++) {
            assertThat(c.get(i).count() - c.get(i).error())
                    .as("the order of %s is certain", c.get(i))
                    .isGreaterThanOrEqualTo(c.get(i + 1).count());
            assertThat(truth.get(c.get(i).key())).as("the ten are above n/k").isGreaterThan(stream.size() / 128L);
        }
        long n = stream.size();
        for (Counter k : c) {
            long t = truth.get(k.key());
            assertThat(t).as("%s: count - error <= true <= count", k).isBetween(k.count() - k.error(), k.count());
        }
        Set<String> tracked = new HashSet<>();
        c.forEach(k -> tracked.add(k.key()));
        truth.forEach((key, t) -> {
            if (t > n / 128) {
                assertThat(tracked)
                        .as("%s seen %d > n/k = %d times", key, t, n / 128)
                        .contains(key);
            }
        });
        assertThat(c.stream().mapToLong(Counter::count).sum())
                .as("the counts add up to the stream")
                .isEqualTo(n);
        assertThat(tracked).hasSize(128);
    }

    @Test
    void evictionsKeepTheIndexRight() {
        // many evictions through a small table: every tracked key must still be found (a second offer of it adds to
        // its counter rather than taking another), and no key is held twice
        SpaceSaving s = new SpaceSaving(5);
        Random r = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            s.offer("k" + r.nextInt(i % 3 == 0 ? 8 : 5000));
            if (i % 9973 == 0) {
                List<Counter> before = counters(s);
                assertThat(before).extracting(Counter::key).doesNotHaveDuplicates();
                Counter any = before.get(r.nextInt(before.size()));
                s.offer(any.key());
                assertThat(counters(s)).contains(new Counter(any.key(), any.count() + 1, any.error()));
            }
        }
        assertThat(counters(s).stream().mapToLong(Counter::count).sum()).isEqualTo(s.total());
    }

    @Test
    void clearForgetsEverything() {
        SpaceSaving s = new SpaceSaving(3);
        for (int i = 0; i < 100; i++) {
            s.offer("k" + (i % 7));
        }
        s.clear();
        assertThat(counters(s)).isEmpty();
        assertThat(s.total()).isZero();
        s.offer("x");
        assertThat(counters(s)).containsExactly(new Counter("x", 1, 0));
    }

    @Test
    void anOfferAllocatesNothing() {
        SpaceSaving s = new SpaceSaving(128);
        String[] keys = new String[10_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "shop|user=" + i;
            int unused = keys[i].hashCode(); // computed and cached now, as a long-lived key's is
        }
        for (int i = 0; i < 200_000; i++) {
            s.offer(keys[i % 7 == 0 ? 1 : i % keys.length]); // warm up: evictions, increments, new buckets
        }
        long allocated = Long.MAX_VALUE;
        for (int round = 0; round < 3; round++) { // the least of a few rounds: the JIT may allocate once in a while
            long before = allocatedBytes();
            for (int i = 0; i < 200_000; i++) {
                s.offer(keys[i % 7 == 0 ? 1 : i % keys.length]);
            }
            allocated = Math.min(allocated, allocatedBytes() - before);
        }
        assertThat(allocated)
                .as("bytes allocated by 200,000 offers")
                .isLessThan(16 * 1024); // reading the counter costs ~2 KB; one object per call would be ≥ 3 MB
    }

    static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean())
                .getCurrentThreadAllocatedBytes();
    }
}
