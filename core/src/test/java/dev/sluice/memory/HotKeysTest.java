package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The keyed call keeps handles of the keys it meets often ({@link HotKeys}); a kept key must decide exactly as a key
 * that is never kept (longer than {@link HotKeys#MAX_KEY_LENGTH}), through resets, evictions and moved slots, and
 * keys that collide in the table must never share a bucket.
 */
class HotKeysTest {
    private static final long T0 = 1_767_225_600_000_000_000L;
    private static final String NEVER_KEPT = "k".repeat(HotKeys.MAX_KEY_LENGTH + 1);

    @Test
    void aKeptKeyDecidesAsAKeyThatIsNeverKept() {
        ManualTicker t = ManualTicker.atEpochNanos(T0);
        // 64 keys at most: one segment, so the churn below evicts and rebuilds
        InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(64).build();
        InMemoryRateLimiter twin =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(1 << 20).build();
        for (Limit l : new Limit[] {
            Limit.tokenBucket(5, Rate.perSecond(2)),
            Limit.gcra(Rate.perSecond(3), 4),
            Limit.fixedWindow(5, Duration.ofSeconds(1)),
            Limit.slidingLog(5, Duration.ofSeconds(1))
        }) {
            long evictions = 0;
            boolean kept = false;
            for (int round = 0; round < 3_000; round++) {
                Decision d = rl.tryAcquire(new String("hot"), l); // an equal key, not the same object
                Decision expected = twin.tryAcquire(NEVER_KEPT, l);
                if (!d.equals(expected)) {
                    // only an eviction may make the key fresh: then it is generous, never strict
                    evictions++;
                    assertThat(d.remaining()).as("round %d", round).isGreaterThan(expected.remaining());
                    twin.reset(NEVER_KEPT, l);
                    twin.tryAcquire(NEVER_KEPT, l);
                }
                assertThat(rl.peek("hot", l)).as("round %d", round).isEqualTo(twin.peek(NEVER_KEPT, l));
                kept |= rl.hotKeys.get("hot", l) != null;
                switch (round % 7) {
                    case 0 -> {
                        for (int i = 0; i < 30; i++) {
                            rl.tryAcquire("other:" + round + ":" + i, l, Math.min(5, l.capacity()));
                        }
                    }
                    case 1 -> {
                        rl.reset("hot", l);
                        twin.reset(NEVER_KEPT, l);
                    }
                    case 2 -> t.advanceNanos(Duration.ofMillis(97).toNanos());
                    default -> {}
                }
            }
            assertThat(twin.hotKeys.get(NEVER_KEPT, l)).isNull();
            assertThat(kept).as("%s: 3,000 calls put the key in the table", l).isTrue();
            assertThat(evictions).as("%s", l).isLessThan(3_000 / 7);
        }
    }

    @Test
    void keysThatCollideInTheTableNeverShareABucket() {
        // "Aa" and "BB" have the same String hash, so they take turns in one entry of the table
        assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());
        Limit l = Limit.tokenBucket(1_000, Rate.perHour(1));
        InMemoryRateLimiter rl = InMemoryRateLimiter.builder()
                .ticker(ManualTicker.atEpochNanos(T0))
                .build();
        int aa = 0;
        int bb = 0;
        for (int i = 0; i < 3_000; i++) {
            if (rl.tryAcquire("Aa", l).allowed()) {
                aa++;
            }
            if (rl.tryAcquire("BB", l).allowed()) {
                bb++;
            }
        }
        assertThat(aa).isEqualTo(1_000);
        assertThat(bb).isEqualTo(1_000);
        assertThat(rl.hotKeys.get("Aa", l) != null || rl.hotKeys.get("BB", l) != null)
                .as("one of them is kept")
                .isTrue();
    }

    @Test
    void theSameKeyUnderAnotherLimitIsAnotherBucket() {
        // buckets large enough to be still in use once the key is kept (after dozens of calls)
        Limit small = Limit.tokenBucket(1_000, Rate.perHour(1));
        Limit large = Limit.tokenBucket(1_001, Rate.perHour(1));
        for (int c = 1_002; HotKeys.index("k".hashCode(), large) != HotKeys.index("k".hashCode(), small); c++) {
            large = Limit.tokenBucket(c, Rate.perHour(1)); // until both take turns in one entry of the table
        }
        InMemoryRateLimiter rl = InMemoryRateLimiter.builder()
                .ticker(ManualTicker.atEpochNanos(T0))
                .build();
        int viaSmall = 0;
        int viaLarge = 0;
        for (int i = 0; i < 3_000; i++) {
            viaSmall += rl.tryAcquire("k", small).allowed() ? 1 : 0;
            viaLarge += rl.tryAcquire("k", large).allowed() ? 1 : 0;
        }
        assertThat(viaSmall).isEqualTo(1_000);
        assertThat(viaLarge).isEqualTo(large.capacity());
    }
}
