package dev.sluice.tck;

import static dev.sluice.tck.Tck.ms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link RateLimiter#bind}: one key under one limit as an object, on every store. Its decisions are the keyed
 * calls' (they share the key's state); its blocking calls wait with a {@link BoundLimit.Sleeper} that these tests
 * control: it records how long each waiter was told to park and, where a test says so, moves the ticker on by it.
 */
public interface BoundLimitTck extends StoreUnderTest {

    @Test
    default void aBoundHandleSharesTheKeyedCallsState() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(3, Rate.perSecond(1));
        String k = Tck.key("bound");
        try (RateLimiter rl = newLimiter(t)) {
            BoundLimit b = rl.bind(k, l);
            assertThat(b.key()).isEqualTo(k);
            assertThat(b.limit()).isEqualTo(l);
            assertThat(b.tryAcquire()).isEqualTo(new Decision(true, 3, 2, 0, ms(1000)));
            assertThat(rl.tryAcquire(k, l, 2).remaining())
                    .as("the keyed call sees what the handle took")
                    .isZero();
            assertThat(b.peek().allowed()).isFalse();
            Decision denied = b.tryAcquire();
            assertThat(denied.allowed()).isFalse();
            assertThat(denied.retryAfterNanos()).isEqualTo(ms(1000));
            assertThat(b.tryAcquireAsync().join()).isEqualTo(denied);
            b.reset();
            assertThat(rl.tryAcquire(k, l, 3).allowed())
                    .as("reset through the handle")
                    .isTrue();
        }
    }

    @Test
    default void theVerdictOnlyCallDecidesAndTakesAsTryAcquireDoes() {
        for (Limit l : new Limit[] {
            Limit.tokenBucket(3, Rate.perSecond(1)),
            Limit.gcra(Rate.perSecond(1), 3),
            Limit.fixedWindow(3, Duration.ofSeconds(1)),
            Limit.slidingWindow(3, Duration.ofSeconds(1)),
            Limit.slidingLog(3, Duration.ofSeconds(1))
        }) {
            ManualTicker t = Tck.ticker();
            String k = Tck.key("bound-permit-" + l.algorithm().shortName());
            try (RateLimiter rl = newLimiter(t)) {
                BoundLimit b = rl.bind(k, l);
                assertThat(verdictMatchesKeyedCall(rl, b, 1)).as("%s", l).isTrue();
                assertThat(verdictMatchesKeyedCall(rl, b, 2)).as("%s", l).isTrue();
                assertThat(verdictMatchesKeyedCall(rl, b, 1))
                        .as("%s: all three taken", l)
                        .isFalse();
                t.advance(Duration.ofSeconds(2));
                verdictMatchesKeyedCall(rl, b, 2);
                verdictMatchesKeyedCall(rl, b, 1);
                verdictMatchesKeyedCall(rl, b, 1);
                t.advance(Duration.ofMillis(500));
                verdictMatchesKeyedCall(rl, b, 1);
                verdictMatchesKeyedCall(rl, b, 3);
            }
        }
    }

    /**
     * {@code b.tryAcquirePermits(cost)}, and the same keyed call on a twin key of its own: the verdicts must agree
     * and so must the two keys' states afterwards. Returns the verdict.
     */
    private static boolean verdictMatchesKeyedCall(RateLimiter rl, BoundLimit b, long cost) {
        String twin = b.key() + "-twin";
        boolean viaHandle = cost == 1 ? b.tryAcquirePermit() : b.tryAcquirePermits(cost);
        boolean keyed = rl.tryAcquire(twin, b.limit(), cost).allowed();
        assertThat(viaHandle)
                .as("%s, cost %d: the handle's verdict is the keyed call's", b.limit(), cost)
                .isEqualTo(keyed);
        assertThat(rl.peek(b.key(), b.limit()))
                .as("%s, cost %d: the handle took what the keyed call took", b.limit(), cost)
                .isEqualTo(rl.peek(twin, b.limit()));
        return viaHandle;
    }

    @Test
    default void waitersOnATokenBucketAreReleasedAtTheLimitsRateOneStoreCallEach() throws Exception {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(1, Rate.perSecond(10)); // one permit every 100 ms
        String k = Tck.key("bound-acquire");
        int waiters = 5;
        List<Long> parked = Collections.synchronizedList(new ArrayList<>());
        try (RateLimiter rl = newLimiter(t)) {
            BoundLimit b = rl.bind(k, l).withSleeper(parked::add);
            CountDownLatch done = new CountDownLatch(waiters);
            List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < waiters; i++) {
                Thread th = new Thread(() -> {
                    try {
                        b.acquire();
                    } catch (Throwable e) {
                        failures.add(e);
                    } finally {
                        done.countDown();
                    }
                });
                th.start();
            }
            assertThat(done.await(30, TimeUnit.SECONDS)).as("hang guard").isTrue();
            assertThat(failures).isEmpty();
            List<Long> sorted = new ArrayList<>(parked);
            Collections.sort(sorted);
            // each reserved its permit at once (the clock did not move) and parks until it is free: 0, 100, ... ms
            assertThat(sorted).containsExactly(0L, ms(100), ms(200), ms(300), ms(400));
            assertThat(rl.tryAcquire(k, l).retryAfterNanos())
                    .as("all five permits are spoken for")
                    .isEqualTo(ms(500));
        }
    }

    @Test
    default void tryAcquireWithATimeoutWaitsOnlyWhenThePermitsComeInTime() throws Exception {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.gcra(Rate.perSecond(10), 1);
        String k = Tck.key("bound-timeout");
        List<Long> parked = Collections.synchronizedList(new ArrayList<>());
        try (RateLimiter rl = newLimiter(t)) {
            BoundLimit b = rl.bind(k, l).withSleeper(parked::add);
            assertThat(b.tryAcquire(1, Duration.ZERO)).isTrue();
            assertThat(b.tryAcquire(1, Duration.ofMillis(99)))
                    .as("free in 100 ms, may wait 99")
                    .isFalse();
            assertThat(b.tryAcquire(1, Duration.ofMillis(100))).isTrue();
            assertThat(parked).containsExactly(0L, ms(100));
            assertThat(rl.tryAcquire(k, l).retryAfterNanos())
                    .as("the refused call took nothing")
                    .isEqualTo(ms(200));
        }
    }

    @Test
    default void onAWindowABlockingCallRetriesWhenTheWindowTurns() throws Exception {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.fixedWindow(2, Duration.ofSeconds(1));
        String k = Tck.key("bound-window");
        List<Long> parked = new ArrayList<>();
        try (RateLimiter rl = newLimiter(t)) {
            BoundLimit b = rl.bind(k, l).withSleeper(nanos -> {
                parked.add(nanos);
                t.advanceNanos(nanos); // the sleeper is where time passes here
            });
            b.acquire();
            b.acquire();
            assertThat(parked).isEmpty();
            long windowLeft = rl.tryAcquire(k, l).retryAfterNanos();
            assertThat(b.tryAcquire(1, Duration.ofNanos(windowLeft - 1))).isFalse();
            assertThat(parked).as("no wait that cannot succeed").isEmpty();
            b.acquire();
            assertThat(parked).containsExactly(windowLeft);
            assertThat(windowLeft).isBetween(1L, ms(1000));
            assertThat(rl.peek(k, l).remaining()).isEqualTo(1);
        }
    }

    @SuppressWarnings("NullAway") // passes null on purpose, to see it refused
    @Test
    default void blockingCallsAreInterruptibleAndCheckTheirInput() throws Exception {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(1, Rate.perMinute(1));
        String k = Tck.key("bound-interrupt");
        try (RateLimiter rl = newLimiter(t)) {
            BoundLimit b = rl.bind(k, l); // the real sleeper: parks
            b.acquire();
            Thread.currentThread().interrupt();
            assertThatThrownBy(b::acquire).isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).isFalse();
            List<Throwable> thrown = Collections.synchronizedList(new ArrayList<>());
            Thread waiter = new Thread(() -> {
                try {
                    b.acquire(); // a minute away on a ticker that does not move
                } catch (Throwable e) {
                    thrown.add(e);
                }
            });
            waiter.start();
            // until the waiter's reservation is made (the next permit is then two minutes away, not one)
            for (int i = 0; i < 10_000 && waiter.isAlive() && rl.peek(k, l).retryAfterNanos() < ms(90_000); i++) {
                waiter.join(1);
            }
            assertThat(rl.peek(k, l).retryAfterNanos()).isEqualTo(ms(120_000));
            waiter.interrupt();
            waiter.join(10_000);
            assertThat(waiter.isAlive()).as("hang guard").isFalse();
            assertThat(thrown).singleElement().isInstanceOf(InterruptedException.class);
            assertThatThrownBy(() -> b.tryAcquire(2, Duration.ofDays(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("exceeds capacity 1");
            assertThatThrownBy(() -> b.tryAcquire(1, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("negative");
            assertThatThrownBy(() -> rl.bind("", l)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> rl.bind(k, null)).isInstanceOf(NullPointerException.class);
        }
    }

    @Test
    default void acquireAboveTheCapacityBooksItsPortionsBackToBackAndWaitsForTheLast() throws Exception {
        for (Limit l : new Limit[] {Limit.tokenBucket(2, Rate.perSecond(10)), Limit.gcra(Rate.perSecond(10), 2)}) {
            ManualTicker t = Tck.ticker();
            String k = Tck.key("bound-portions-" + l.algorithm().shortName());
            List<Long> parked = new ArrayList<>();
            try (RateLimiter rl = newLimiter(t)) {
                BoundLimit b = rl.bind(k, l).withSleeper(parked::add);
                // a full bucket of 2, one permit every 100 ms: 2 now, then 2 more by 200 ms and the 5th at 300 ms
                b.acquire(5);
                assertThat(parked)
                        .as("%s: one park, until the last portion is free", l)
                        .containsExactly(ms(300));
                assertThat(rl.tryAcquire(k, l).retryAfterNanos())
                        .as("%s: all five spoken for", l)
                        .isEqualTo(ms(400));

                String idle = k + "-interrupted";
                Thread.currentThread().interrupt();
                assertThatThrownBy(() -> rl.bind(idle, l).acquire(5)).isInstanceOf(InterruptedException.class);
                assertThat(Thread.interrupted())
                        .as("the interrupt status is cleared")
                        .isFalse();
                assertThat(rl.peek(idle, l).remaining())
                        .as("%s: an interrupted caller takes nothing", l)
                        .isEqualTo(2);
            }
        }
        Limit window = Limit.fixedWindow(2, Duration.ofSeconds(1));
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            assertThatThrownBy(() ->
                            rl.bind(Tck.key("bound-portions-window"), window).acquire(3))
                    .as("a window cannot book the future")
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 3 exceeds capacity 2");
        }
    }
}
