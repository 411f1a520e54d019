package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The in-memory handle remembers its key's slot; the slot may then be evicted, reset, or moved to a new table
 * (a rebuild on growth or on a new base). Whatever happened, the handle must decide on the key's one state, as the
 * keyed call does: checked by running a handle and the keyed calls on one limiter against the keyed calls on a
 * twin limiter that never had a handle.
 */
class MemoryBoundTest {

    @Test
    void aHandleKeepsDecidingOnTheKeysStateWhenItsSlotIsEvictedResetOrMoved() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        // 64 keys at most: one segment, so other keys' inserts fill it and evict
        InMemoryRateLimiter withHandle = InMemoryRateLimiter.builder().ticker(t).maxKeys(64).build();
        InMemoryRateLimiter twin = InMemoryRateLimiter.builder().ticker(t).maxKeys(1 << 20).build();
        for (Limit l : new Limit[] {Limit.tokenBucket(5, Rate.perSecond(2)), Limit.fixedWindow(5, Duration.ofSeconds(1)),
                Limit.slidingWindow(5, Duration.ofSeconds(1))}) {
            BoundLimit hot = withHandle.bind("hot", l);
            long evictions = 0;
            java.util.Set<Slots> tables = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            AtomicLong others = new AtomicLong();
            for (int round = 0; round < 300; round++) {
                Decision viaHandle = hot.tryAcquire();
                Decision keyed = withHandle.tryAcquire("hot", l);
                // the twin sees the same two calls on a key it never evicts
                Decision twinFirst = twin.tryAcquire("hot", l);
                Decision twinSecond = twin.tryAcquire("hot", l);
                if (!viaHandle.equals(twinFirst) || !keyed.equals(twinSecond)) {
                    // only an eviction may make the handle's key fresh: then it is generous, never strict
                    evictions++;
                    assertThat(viaHandle.remaining()).isGreaterThanOrEqualTo(twinFirst.remaining());
                    twin.reset("hot", l);
                    twin.tryAcquire("hot", l);
                    twin.tryAcquire("hot", l);
                }
                MemoryBound.Where where = ((MemoryBound) hot).where;
                if (where != null) {
                    tables.add(where.slots());
                }
                assertThat(withHandle.peek("hot", l)).as("round %d: the handle wrote where the keyed call reads", round)
                        .isEqualTo(twin.peek("hot", l));
                switch (round % 5) {
                    case 0 -> { // churn: 40 other keys, busy (not fresh), so the table fills and evicts
                        for (int i = 0; i < 40; i++) {
                            withHandle.tryAcquire("other:" + others.incrementAndGet(), l, 5);
                        }
                    }
                    case 1 -> {
                        hot.reset();
                        twin.reset("hot", l);
                    }
                    case 2 -> t.advanceNanos(Duration.ofMillis(137).toNanos());
                    default -> {
                    }
                }
            }
            assertThat(withHandle.trackedKeys()).isLessThanOrEqualTo(64);
            assertThat(others.get()).as("the churn inserted far more keys than fit").isGreaterThan(64 * 10);
            if (l.algorithm() != dev.sluice.Algorithm.SLIDING_WINDOW) { // a packed state: the handle remembers its slot
                assertThat(tables.size()).as("the remembered slot went stale: the table was rebuilt").isGreaterThan(1);
            }
            assertThat(evictions).as("an evicted hot key starts fresh: generous, never strict (checked above)")
                    .isLessThan(300);
        }
    }
}
