package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.Reachability;
import dev.sluice.Ticker;
import dev.sluice.algorithm.Exact;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * The in-memory handle remembers its key's slot; the slot may then be evicted, reset, or moved to a new table
 * (a rebuild on growth or on a new base). Whatever happened, the handle must decide on the key's one state, as the
 * keyed call does: checked by running a handle and the keyed calls on one limiter against the keyed calls on a
 * twin limiter that never had a handle.
 */
class MemoryBoundTest {
    /**
     * About one permit a second, counted in units of 1/1,000,000,007 ns: a table holding it is rebuilt on a new
     * base every 2.3 s of ticker time ({@code RegisteredLimit#rebaseIntervalNanos}).
     */
    private static final Limit SLOW_BASE =
            Limit.tokenBucket(4, Rate.of(1_000_000_007L, Duration.ofSeconds(1_000_000_000L)));

    @Test
    void aHandleKeepsDecidingOnTheKeysStateWhenItsSlotIsEvictedResetOrMoved() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        // 64 keys at most: one segment, so other keys' inserts fill it and evict
        InMemoryRateLimiter withHandle =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(64).build();
        InMemoryRateLimiter twin =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(1 << 20).build();
        for (Limit l : new Limit[] {
            Limit.tokenBucket(5, Rate.perSecond(2)),
            Limit.fixedWindow(5, Duration.ofSeconds(1)),
            Limit.slidingWindow(5, Duration.ofSeconds(1)),
            Limit.gcra(Rate.perSecond(3), 4),
            SLOW_BASE
        }) {
            BoundLimit hot = withHandle.bind("hot", l);
            long evictions = 0;
            java.util.Set<Long> tables = new java.util.HashSet<>();
            long others = 0;
            for (int round = 0; round < 300; round++) {
                // every other round the verdict-only call, which on the token bucket and GCRA builds no Decision
                boolean verdictOnly = round % 2 == 1;
                Decision viaHandle = verdictOnly ? null : hot.tryAcquire();
                boolean handleAllowed = verdictOnly ? hot.tryAcquirePermit() : viaHandle.allowed();
                Decision keyed = withHandle.tryAcquire("hot", l);
                // the twin sees the same two calls on a key it never evicts
                Decision twinFirst = twin.tryAcquire("hot", l);
                Decision twinSecond = twin.tryAcquire("hot", l);
                boolean same = verdictOnly ? handleAllowed == twinFirst.allowed() : viaHandle.equals(twinFirst);
                if (!same || !keyed.equals(twinSecond)) {
                    // only an eviction may make the handle's key fresh: then it is generous, never strict
                    evictions++;
                    assertThat(handleAllowed || !twinFirst.allowed())
                            .as("round %d: stricter than the twin", round)
                            .isTrue();
                    if (!verdictOnly) {
                        assertThat(viaHandle.remaining()).isGreaterThanOrEqualTo(twinFirst.remaining());
                    }
                    twin.reset("hot", l);
                    twin.tryAcquire("hot", l);
                    twin.tryAcquire("hot", l);
                }
                MemoryBound.Where where = ((MemoryBound) hot).where;
                if (where != null) {
                    tables.add(where.generation());
                }
                assertThat(withHandle.peek("hot", l))
                        .as("round %d: the handle wrote where the keyed call reads", round)
                        .isEqualTo(twin.peek("hot", l));
                switch (round % 5) {
                    case 0 -> { // churn: 40 other keys, busy (not fresh), so the table fills and evicts
                        for (int i = 0; i < 40; i++) {
                            withHandle.tryAcquire("other:" + ++others, l, Math.min(5, l.capacity()));
                        }
                    }
                    case 1 -> {
                        hot.reset();
                        twin.reset("hot", l);
                    }
                    case 2 -> t.advanceNanos(Duration.ofMillis(137).toNanos());
                    default -> {}
                }
            }
            assertThat(withHandle.trackedKeys()).isLessThanOrEqualTo(64);
            assertThat(others).as("the churn inserted far more keys than fit").isGreaterThan(64 * 10);
            if (l.algorithm() != dev.sluice.Algorithm.SLIDING_WINDOW) { // a packed state: the handle remembers its slot
                assertThat(tables.size())
                        .as("the remembered slot went stale: the table was rebuilt")
                        .isGreaterThan(1);
            }
            assertThat(evictions)
                    .as("an evicted hot key starts fresh: generous, never strict (checked above)")
                    .isLessThan(300);
        }
    }

    /**
     * A limit whose table is due for a rebase every 2.3 µs (a rate of 10^15 + 1 a second: time scale 10^15 + 1), on a
     * clock that moves 3 µs a read: every call finds its table due, rebases it, and must then decide at the reading
     * it rebased with, not read the clock again (which would find the table due again, for ever).
     */
    @Test
    void aHandleWhoseTableIsDueAtEveryReadStillDecides() {
        AtomicLong clock = new AtomicLong(1_767_225_600_000_000_000L);
        Ticker fast = () -> clock.addAndGet(3_000);
        InMemoryRateLimiter rl = InMemoryRateLimiter.builder().ticker(fast).build();
        Limit l = Limit.tokenBucket(1, Rate.perSecond(1_000_000_000_000_001L));
        assertThat(new RegisteredLimit(l, 0, 0).rebaseIntervalNanos).isLessThan(3_000);
        BoundLimit bound = rl.bind("k", l);
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            for (int i = 0; i < 100; i++) {
                assertThat(bound.tryAcquirePermit())
                        .as("a permit a µs; calls 3 µs apart")
                        .isTrue();
                assertThat(bound.tryAcquire().allowed()).isTrue();
            }
        });
    }

    @Test
    void aHandleDoesNotKeepAReplacedTableAlive() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        Limit l = Limit.tokenBucket(5, Rate.perHour(1));
        InMemoryRateLimiter rl =
                InMemoryRateLimiter.builder().ticker(t).maxKeys(64).build(); // one segment
        BoundLimit hot = rl.bind("hot", l);
        assertThat(hot.tryAcquirePermit()).isTrue();
        Segment segment = rl.store.segmentFor(rl.store.hash("hot", rl.store.register(l)));
        Slots first = segment.slots;
        assertThat(Reachability.strongly(hot, first))
                .as("the walk finds the table the handle's store uses")
                .isTrue();
        for (int i = 0; i < 200; i++) {
            // the table grows and evicts (these keys, which are closer to fresh than the hot one): it is replaced
            rl.tryAcquire("other:" + i, Limit.tokenBucket(5, Rate.perSecond(1)));
        }
        assertThat(segment.slots).isNotSameAs(first);
        // what the collector would see, without asking for a collection: nothing the handle holds leads to the table,
        // neither while it still names the old table's slot nor once it has found its key in the new one
        assertThat(Reachability.strongly(hot, first))
                .as("the replaced table is collectable while the handle lives")
                .isFalse();
        assertThat(hot.tryAcquirePermit())
                .as("the handle found its key in the new table")
                .isTrue();
        assertThat(Reachability.strongly(hot, first)).isFalse();
        assertThat(hot.peek().remaining()).isEqualTo(3);
    }

    /** The README's example ("One limit as an object"): a burst of 100, then 50 a second. */
    @Test
    void theReadmesVerdictOnlyExampleAdmitsTheBurstThenTheRate() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().ticker(t).build();
        BoundLimit search = limiter.bind("search", Limit.tokenBucket(100, Rate.perSecond(50)));
        int admitted = 0;
        while (search.tryAcquirePermit()) {
            admitted++;
        }
        assertThat(admitted).isEqualTo(100);
        t.advance(Duration.ofMillis(100));
        assertThat(search.tryAcquirePermits(5)).isTrue();
        assertThat(search.tryAcquirePermit())
                .as("5 permits refilled in 100 ms, all taken")
                .isFalse();
        assertThat(search.peek().retryAfterNanos()).isEqualTo(20_000_000L);
    }

    @Test
    void aHandleAloneOnItsKeyRebasesItsTableAsTheKeyedCallWould() {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        InMemoryRateLimiter withHandle = InMemoryRateLimiter.builder().ticker(t).build();
        InMemoryRateLimiter twin = InMemoryRateLimiter.builder().ticker(t).build();
        BoundLimit hot = withHandle.bind("hot", SLOW_BASE);
        // nothing but the handle touches its table: only the handle's own check can see the base fall behind
        for (long idleNanos :
                new long[] {0, 1_000_000_000L, 2_400_000_000L, 9_500_000_000L, 3_600_000_000_000L, 0, 7}) {
            t.advanceNanos(idleNanos);
            for (int i = 0; i < 6; i++) {
                Decision twinDecision = twin.tryAcquire("hot", SLOW_BASE);
                Decision handleDecision = i % 2 == 0 ? hot.tryAcquire() : null;
                if (handleDecision == null) {
                    assertThat(hot.tryAcquirePermit())
                            .as("after %d ns idle, call %d", idleNanos, i)
                            .isEqualTo(twinDecision.allowed());
                } else {
                    assertThat(handleDecision)
                            .as("after %d ns idle, call %d", idleNanos, i)
                            .isEqualTo(twinDecision);
                }
            }
        }
    }

    /**
     * Exactness of the handle's own step under contention: threads sharing one handle, threads with their own handle
     * and keyed calls hammer one key while other threads churn the table (growth, rebuilds, evictions) and the ticker
     * moves on in steps, so the remembered slots go stale and the tables are rebased. Every permit is taken exactly
     * once: the bucket's capacity plus what refilled, not one more, not one less.
     */
    @RepeatedTest(5)
    void handlesAdmitExactlyTheLimitUnderContentionWhileSlotsMoveAndTablesAreRebased() throws Exception {
        ManualTicker t = ManualTicker.atEpochNanos(1_767_225_600_000_000_000L);
        Limit churn = Limit.tokenBucket(1, Rate.perSecond(1));
        for (Limit hot :
                new Limit[] {Limit.tokenBucket(300, Rate.perHour(1)), Limit.gcra(Rate.perHour(1), 300), SLOW_BASE}) {
            ExecutorService pool = Executors.newFixedThreadPool(7);
            try (InMemoryRateLimiter rl =
                    InMemoryRateLimiter.builder().ticker(t).maxKeys(2048).build()) {
                long start = t.read();
                BoundLimit shared = rl.bind("hot", hot);
                AtomicLong admitted = new AtomicLong();
                AtomicBoolean churning = new AtomicBoolean(true);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    int id = w;
                    done.add(pool.submit(() -> {
                        BoundLimit own = rl.bind("hot", hot);
                        go.await();
                        // keep asking until the churn and the clock have stopped, then drain what is left
                        for (int i = 0; churning.get() || i < 2_000; i++) {
                            boolean ok = switch ((id + i) % 4) {
                                case 0 -> shared.tryAcquirePermit();
                                case 1 -> shared.tryAcquire().allowed();
                                case 2 -> own.tryAcquirePermits(1);
                                default -> rl.tryAcquire("hot", hot).allowed();
                            };
                            if (ok) {
                                admitted.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                List<Future<?>> churners = new ArrayList<>();
                for (int w = 0; w < 2; w++) {
                    int id = w;
                    churners.add(pool.submit(() -> {
                        go.await();
                        for (int i = 0; i < 10_000; i++) {
                            rl.tryAcquire("churn-" + id + "-" + i, churn); // forces growth, rebuilds, evictions
                        }
                        return null;
                    }));
                }
                churners.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 100; i++) {
                        awaitDrained(rl, hot); // so that no refill is lost to a full bucket while the hammers sleep
                        t.advanceNanos(100_000_000L); // 10 s in all: four rebases of SLOW_BASE's tables
                    }
                    awaitDrained(rl, hot);
                    return null;
                }));
                go.countDown();
                for (Future<?> f : churners) {
                    f.get(1, TimeUnit.MINUTES);
                }
                churning.set(false);
                for (Future<?> f : done) {
                    f.get(1, TimeUnit.MINUTES);
                }
                // what the limit allows over the time that passed, all of it demanded
                long refilled = Exact.mulDivFloor(t.read() - start, hot.timeScale(), hot.intervalScaled());
                assertThat(admitted.get()).as("%s", hot).isEqualTo(hot.capacity() + refilled);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** Waits for the hammering threads to take what the bucket holds (they spin, so does this); 1 min guard. */
    private static void awaitDrained(InMemoryRateLimiter rl, Limit l) {
        long guard = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (rl.peek("hot", l).remaining() > 0 && System.nanoTime() < guard) {
            Thread.onSpinWait();
        }
    }
}
