package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static dev.sluice.tck.Expect.denied;
import static dev.sluice.tck.Tck.ms;
import static dev.sluice.tck.Tck.s;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * What a settle charges and gives back, algorithm by algorithm, with the cases where a give-back is not defined (a
 * full bucket keeps nothing more; an ended window, a previous-but-one window or an entry slid out of the log gives
 * nothing back). Each scenario runs on a fresh store through the synchronous and through the asynchronous view.
 */
public interface SettleAlgorithmsTck extends StoreUnderTest {

    /** How long the scenarios' reservations stay pending: longer than any of them lasts. */
    Duration WITHIN = Duration.ofMinutes(10);

    /** One scenario, run on a fresh store and ticker through one view. */
    @FunctionalInterface
    interface Scenario {
        void run(RateLimiter rl, ManualTicker t, Views v, String key);
    }

    /** Runs {@code scenario} through both views, each on a fresh store and ticker at {@link Tck#T0}. */
    default void bothViews(String name, Scenario scenario) {
        for (Views v : Views.values()) {
            ManualTicker t = Tck.ticker();
            try (RateLimiter rl = newLimiter(t)) {
                scenario.run(rl, t, v, Tck.key(name));
            }
        }
    }

    static Settlement settled(long estimate, long adjusted, long remaining) {
        return new Settlement(true, estimate, adjusted, remaining);
    }

    @Test
    default void tokenBucketChargesTheRestEvenIntoDebtWaitedOutAtTheRefillRate() {
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        bothViews("settle-tb-charge", (rl, t, v, k) -> {
            assertThat(v.reserve(rl, k, l, 3, "a", WITHIN)).isEqualTo(allowed(10, 7, s(3)));
            assertThat(v.settle(rl, k, l, "a", 5)).isEqualTo(settled(3, 2, 5));
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(5);
        });
        bothViews("settle-tb-debt", (rl, t, v, k) -> {
            assertThat(v.reserve(rl, k, l, 5, "b", WITHIN)).isEqualTo(allowed(10, 5, s(5)));
            assertThat(rl.tryAcquire(k, l, 5)).isEqualTo(allowed(10, 0, s(10)));
            // 3 more than the bucket holds: charged in full, 3 s of debt before the next permit
            assertThat(v.settle(rl, k, l, "b", 8)).isEqualTo(settled(5, 3, 0));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, s(4), s(13)));
            t.advanceNanos(s(3));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, s(1), s(10)));
            t.advanceNanos(s(1));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 0, s(10)));
        });
    }

    @Test
    default void tokenBucketGivesBackWholePermitsUpToAFullBucket() {
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        bothViews("settle-tb-back", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 6, "c", WITHIN);
            assertThat(v.settle(rl, k, l, "c", 2)).isEqualTo(settled(6, -4, 8));
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(8);
        });
        bothViews("settle-tb-full", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 4, "d", WITHIN);
            t.advanceNanos(s(3)); // 3 of the 4 refilled: only 1 can go back
            assertThat(v.settle(rl, k, l, "d", 0)).isEqualTo(settled(4, -1, 10));
            assertThat(rl.tryAcquire(k, l, 10)).isEqualTo(allowed(10, 0, s(10)));
        });
        bothViews("settle-tb-fraction", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 3, "e", WITHIN);
            t.advanceNanos(ms(500)); // 2.5 permits owed: giving 2 back leaves half a permit owed
            assertThat(v.settle(rl, k, l, "e", 1)).isEqualTo(settled(3, -2, 9));
            assertThat(rl.peek(k, l, 1)).isEqualTo(allowed(10, 9, ms(500)));
        });
        bothViews("settle-tb-fraction-full", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 2, "f", WITHIN);
            t.advanceNanos(ms(500)); // 1.5 owed: the bucket fills, and the 1 whole permit is what went back
            assertThat(v.settle(rl, k, l, "f", 0)).isEqualTo(settled(2, -1, 10));
        });
    }

    /** A debt saturates at {@link Limit#MAX_SCALED} (2^62 units of 1/timeScale ns), as every store keeps it. */
    @Test
    default void tokenBucketDebtSaturates() {
        long p = Duration.ofDays(36_500).toNanos() / 2; // 2 permits per 100 years: the bucket is nearly 2^62 long
        Limit l = Limit.tokenBucket(2, Rate.of(2, Duration.ofDays(36_500)));
        bothViews("settle-tb-saturate", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 1, "s1", WITHIN);
            v.reserve(rl, k, l, 1, "s2", WITHIN);
            assertThat(v.settle(rl, k, l, "s1", 2)).isEqualTo(settled(1, 1, 0));
            assertThat(v.settle(rl, k, l, "s2", 2)).isEqualTo(settled(1, 1, 0));
            assertThat(rl.peek(k, l, 1)).isEqualTo(denied(2, 0, Limit.MAX_SCALED - p, Limit.MAX_SCALED));
        });
    }

    @Test
    default void gcraChargesAndGivesBackAtTheEmissionInterval() {
        Limit l = Limit.gcra(Rate.perSecond(10), 5);
        bothViews("settle-gcra", (rl, t, v, k) -> {
            assertThat(v.reserve(rl, k, l, 2, "g", WITHIN)).isEqualTo(allowed(5, 3, ms(200)));
            assertThat(v.settle(rl, k, l, "g", 4)).isEqualTo(settled(2, 2, 1));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(5, 0, ms(500)));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(5, 0, ms(100), ms(500)));
            assertThat(v.reserve(rl, k + ":2", l, 4, "g", WITHIN)).isEqualTo(allowed(5, 1, ms(400)));
            assertThat(v.settle(rl, k + ":2", l, "g", 1)).isEqualTo(settled(4, -3, 4));
        });
    }

    @Test
    default void fixedWindowChargesNowsWindowAndGivesBackOnlyWhileTheReservationsWindowLasts() {
        Limit l = Limit.fixedWindow(10, Duration.ofSeconds(1));
        bothViews("settle-fw-charge", (rl, t, v, k) -> {
            assertThat(v.reserve(rl, k, l, 4, "a", WITHIN)).isEqualTo(allowed(10, 6, s(1)));
            assertThat(v.settle(rl, k, l, "a", 7)).isEqualTo(settled(4, 3, 3));
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(3);
        });
        bothViews("settle-fw-over", (rl, t, v, k) -> {
            rl.tryAcquire(k, l, 5);
            v.reserve(rl, k, l, 5, "b", WITHIN);
            assertThat(v.settle(rl, k, l, "b", 10)).isEqualTo(settled(5, 5, 0));
            assertThat(rl.tryAcquire(k, l)).isEqualTo(denied(10, 0, s(1), s(1)));
            t.advanceNanos(s(1)); // the count over the limit ended with its window
            assertThat(rl.tryAcquire(k, l)).isEqualTo(allowed(10, 9, s(1)));
        });
        bothViews("settle-fw-back", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 6, "c", WITHIN);
            t.advanceNanos(ms(500));
            assertThat(v.settle(rl, k, l, "c", 2)).isEqualTo(settled(6, -4, 8));
        });
        bothViews("settle-fw-ended", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 5, "d", WITHIN);
            t.advanceNanos(s(1));
            assertThat(v.settle(rl, k, l, "d", 0)).isEqualTo(settled(5, 0, 10));
            assertThat(rl.peek(k, l, 10).allowed()).isTrue();
        });
        bothViews("settle-fw-later-charge", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 2, "e", WITHIN);
            t.advanceNanos(s(1));
            assertThat(v.settle(rl, k, l, "e", 5)).isEqualTo(settled(2, 3, 7));
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(7);
        });
    }

    @Test
    default void slidingWindowGivesBackFromTheReservationsWindowWhileItIsCurrentOrPrevious() {
        Limit l = Limit.slidingWindow(10, Duration.ofSeconds(1));
        bothViews("settle-sw-charge", (rl, t, v, k) -> {
            assertThat(v.reserve(rl, k, l, 3, "a", WITHIN)).isEqualTo(allowed(10, 7, s(2)));
            assertThat(v.settle(rl, k, l, "a", 5)).isEqualTo(settled(3, 2, 5));
            assertThat(v.reserve(rl, k + ":2", l, 6, "a", WITHIN)).isEqualTo(allowed(10, 4, s(2)));
            assertThat(v.settle(rl, k + ":2", l, "a", 2)).isEqualTo(settled(6, -4, 8));
        });
        bothViews("settle-sw-previous", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 4, "c", WITHIN);
            rl.tryAcquire(k, l, 2);
            t.advanceNanos(ms(1500)); // the reservation's window is the previous one, weighing half
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(7);
            assertThat(v.settle(rl, k, l, "c", 1)).isEqualTo(settled(4, -3, 8));
        });
        bothViews("settle-sw-older", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 4, "d", WITHIN);
            t.advanceNanos(ms(2500));
            assertThat(v.settle(rl, k, l, "d", 0)).isEqualTo(settled(4, 0, 10));
        });
        bothViews("settle-sw-later-charge", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 2, "e", WITHIN);
            t.advanceNanos(ms(1250)); // counted in the current window; the previous still weighs 3/4 of 2
            assertThat(v.settle(rl, k, l, "e", 6)).isEqualTo(settled(2, 4, 4));
        });
    }

    @Test
    default void slidingLogChargesAtTheSettleAndGivesBackFromTheReservationsEntry() {
        Limit l = Limit.slidingLog(10, Duration.ofSeconds(1));
        bothViews("settle-sl-charge", (rl, t, v, k) -> {
            assertThat(v.reserve(rl, k, l, 3, "a", WITHIN)).isEqualTo(allowed(10, 7, s(1)));
            t.advanceNanos(ms(100));
            assertThat(v.settle(rl, k, l, "a", 5)).isEqualTo(settled(3, 2, 5));
            t.advanceNanos(ms(900)); // the estimate slid out; the 2 charged at the settle have not
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(8);
        });
        bothViews("settle-sl-back", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 4, "b", WITHIN);
            t.advanceNanos(ms(100));
            rl.tryAcquire(k, l, 2);
            assertThat(v.settle(rl, k, l, "b", 1)).isEqualTo(settled(4, -3, 7));
            assertThat(v.reserve(rl, k + ":2", l, 4, "b", WITHIN)).isEqualTo(allowed(10, 6, s(1)));
            assertThat(v.settle(rl, k + ":2", l, "b", 0)).isEqualTo(settled(4, -4, 10));
        });
        bothViews("settle-sl-slid-out", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 4, "d", WITHIN);
            t.advanceNanos(s(1));
            assertThat(v.settle(rl, k, l, "d", 0)).isEqualTo(settled(4, 0, 10));
        });
    }
}
