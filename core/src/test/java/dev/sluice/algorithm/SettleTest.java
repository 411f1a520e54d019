package dev.sluice.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.Settlement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The pure settle step, branch by branch: each algorithm's charge, give-back, and the give-backs it does not define
 * (a full bucket, an ended window, an entry slid out of the log); a debt and waiting it out; saturation.
 */
class SettleTest {
    private static final long T0 = 1_767_225_600L * 1_000_000_000L;
    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    private static Settlement settled(long estimate, long adjusted, long remaining) {
        return new Settlement(true, estimate, adjusted, remaining);
    }

    /** {@code tryAcquire} of the estimate at {@code at}, then its settle at {@code now}. */
    private static Settle.Settled reserveThenSettle(
            State state, Limit limit, long estimate, long at, long now, long actual) {
        Step reserved = Algorithms.tryAcquire(state, at, limit, estimate);
        assertThat(reserved.decision().allowed()).isTrue();
        return Settle.settle(reserved.state(), now, limit, estimate, at, actual);
    }

    @Test
    void tokenBucketChargesIntoDebtThatIsWaitedOut() {
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        Settle.Settled x = reserveThenSettle(TatState.FRESH, l, 6, T0, T0, 10);
        assertThat(x.settlement()).isEqualTo(settled(6, 4, 0));
        assertThat(x.state()).isEqualTo(new TatState(10 * S, T0));
        // debt: 4 more than a full bucket's worth takes 4 s to refill, and 1 s more before one permit is there
        Settle.Settled debt = Settle.settle(new TatState(10 * S, T0), T0, l, 1, T0, 5);
        assertThat(debt.settlement()).isEqualTo(settled(1, 4, 0));
        assertThat(Algorithms.tryAcquire(debt.state(), T0 + 4 * S, l, 1)
                        .decision()
                        .allowed())
                .isFalse();
        assertThat(Algorithms.tryAcquire(debt.state(), T0 + 5 * S, l, 1)
                        .decision()
                        .allowed())
                .isTrue();
    }

    @Test
    void tokenBucketGivesBackWholePermitsUpToAFullBucket() {
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        assertThat(reserveThenSettle(TatState.FRESH, l, 6, T0, T0, 2).settlement())
                .isEqualTo(settled(6, -4, 8));
        // 3 of 4 refilled: only 1 goes back, the bucket is full
        Settle.Settled full = reserveThenSettle(TatState.FRESH, l, 4, T0, T0 + 3 * S, 0);
        assertThat(full.settlement()).isEqualTo(settled(4, -1, 10));
        assertThat(full.state()).isEqualTo(new TatState(0, T0 + 3 * S));
        // 2.5 owed, 2 given back: half a permit stays owed
        Settle.Settled half = reserveThenSettle(TatState.FRESH, l, 3, T0, T0 + 500 * MS, 1);
        assertThat(half.settlement()).isEqualTo(settled(3, -2, 9));
        assertThat(half.state()).isEqualTo(new TatState(500 * MS, T0 + 500 * MS));
        assertThat(reserveThenSettle(TatState.FRESH, l, 3, T0, T0, 3).settlement())
                .isEqualTo(settled(3, 0, 7));
    }

    @Test
    void tokenBucketDebtSaturatesAtMaxScaled() {
        Limit l = Limit.tokenBucket(2, Rate.of(2, Duration.ofDays(36_500)));
        long p = l.intervalScaled();
        Settle.Settled x = Settle.settle(new TatState(2 * p, T0), T0, l, 1, T0, 2);
        assertThat(x.settlement()).isEqualTo(settled(1, 1, 0));
        assertThat(x.state()).isEqualTo(new TatState(Limit.MAX_SCALED, T0));
        assertThat(Settle.settle(x.state(), T0, l, 1, T0, 2).state()).isEqualTo(x.state());
    }

    @Test
    void gcraSettlesLikeTheTokenBucket() {
        Limit l = Limit.gcra(Rate.perSecond(10), 5);
        assertThat(reserveThenSettle(TatState.FRESH, l, 2, T0, T0, 4).settlement())
                .isEqualTo(settled(2, 2, 1));
        assertThat(reserveThenSettle(TatState.FRESH, l, 4, T0, T0, 1).settlement())
                .isEqualTo(settled(4, -3, 4));
    }

    @Test
    void fixedWindowChargesNowsWindowAndGivesBackOnlyWithinTheReservationsWindow() {
        Limit l = Limit.fixedWindow(10, Duration.ofSeconds(1));
        long k = FixedWindow.windowOf(T0, l);
        Settle.Settled charged = reserveThenSettle(WindowState.FRESH, l, 4, T0, T0, 7);
        assertThat(charged.settlement()).isEqualTo(settled(4, 3, 3));
        assertThat(charged.state()).isEqualTo(new WindowState(k, 7));
        Settle.Settled over = Settle.settle(new WindowState(k, 10), T0, l, 5, T0, 10);
        assertThat(over.settlement()).isEqualTo(settled(5, 5, 0));
        assertThat(over.state()).isEqualTo(new WindowState(k, 15));
        assertThat(reserveThenSettle(WindowState.FRESH, l, 6, T0, T0 + 500 * MS, 2))
                .isEqualTo(new Settle.Settled(settled(6, -4, 8), new WindowState(k, 2)));
        // the reservation's window ended: nothing to give back, a charge goes to the new window
        Settle.Settled ended = reserveThenSettle(WindowState.FRESH, l, 5, T0, T0 + S, 0);
        assertThat(ended.settlement()).isEqualTo(settled(5, 0, 10));
        assertThat(ended.state()).isEqualTo(new WindowState(k, 5));
        assertThat(reserveThenSettle(WindowState.FRESH, l, 2, T0, T0 + S, 5))
                .isEqualTo(new Settle.Settled(settled(2, 3, 7), new WindowState(k + 1, 3)));
        // never below zero, even when the count was set to less (the window state read under other numbers)
        assertThat(Settle.settle(new WindowState(k, 1), T0, l, 5, T0, 0))
                .isEqualTo(new Settle.Settled(settled(5, -1, 10), new WindowState(k, 0)));
    }

    @Test
    void slidingWindowGivesBackFromTheCurrentOrThePreviousWindowOnly() {
        Limit l = Limit.slidingWindow(10, Duration.ofSeconds(1));
        long k = Math.floorDiv(T0, S);
        assertThat(reserveThenSettle(SlidingWindowState.FRESH, l, 3, T0, T0, 5))
                .isEqualTo(new Settle.Settled(settled(3, 2, 5), new SlidingWindowState(k, 0, 5)));
        assertThat(reserveThenSettle(SlidingWindowState.FRESH, l, 6, T0, T0, 2))
                .isEqualTo(new Settle.Settled(settled(6, -4, 8), new SlidingWindowState(k, 0, 2)));
        State six = Algorithms.tryAcquire(
                        Algorithms.tryAcquire(SlidingWindowState.FRESH, T0, l, 4)
                                .state(),
                        T0,
                        l,
                        2)
                .state();
        assertThat(Settle.settle(six, T0 + 1500 * MS, l, 4, T0, 1))
                .isEqualTo(new Settle.Settled(settled(4, -3, 8), new SlidingWindowState(k + 1, 3, 0)));
        assertThat(reserveThenSettle(SlidingWindowState.FRESH, l, 4, T0, T0 + 2500 * MS, 0))
                .isEqualTo(new Settle.Settled(settled(4, 0, 10), new SlidingWindowState(k + 2, 0, 0)));
        assertThat(reserveThenSettle(SlidingWindowState.FRESH, l, 2, T0, T0 + 1250 * MS, 6))
                .isEqualTo(new Settle.Settled(settled(2, 4, 4), new SlidingWindowState(k + 1, 2, 4)));
    }

    @Test
    void slidingLogChargesAtTheSettleAndGivesBackFromTheReservationsEntry() {
        Limit l = Limit.slidingLog(10, Duration.ofSeconds(1));
        Settle.Settled charged = reserveThenSettle(LogState.FRESH, l, 3, T0, T0 + 100 * MS, 5);
        assertThat(charged.settlement()).isEqualTo(settled(3, 2, 5));
        assertThat(charged.state()).isEqualTo(new LogState(new long[] {T0, T0 + 100 * MS}, new long[] {3, 2}));
        assertThat(Settle.settle(charged.state(), T0 + 100 * MS, l, 1, T0 + 100 * MS, 3)
                        .state())
                .as("merged into the entry at now")
                .isEqualTo(new LogState(new long[] {T0, T0 + 100 * MS}, new long[] {3, 4}));
        State logged = Algorithms.tryAcquire(
                        Algorithms.tryAcquire(LogState.FRESH, T0, l, 4).state(), T0 + 100 * MS, l, 2)
                .state();
        assertThat(Settle.settle(logged, T0 + 100 * MS, l, 4, T0, 1))
                .isEqualTo(new Settle.Settled(
                        settled(4, -3, 7), new LogState(new long[] {T0, T0 + 100 * MS}, new long[] {1, 2})));
        assertThat(Settle.settle(logged, T0 + 100 * MS, l, 4, T0, 0))
                .as("an entry given back whole is removed")
                .isEqualTo(new Settle.Settled(
                        settled(4, -4, 8), new LogState(new long[] {T0 + 100 * MS}, new long[] {2})));
        assertThat(reserveThenSettle(LogState.FRESH, l, 4, T0, T0 + S, 0))
                .as("slid out: nothing to give back")
                .isEqualTo(new Settle.Settled(settled(4, 0, 10), LogState.FRESH));
    }
}
