package dev.sluice.tck;

import static dev.sluice.tck.SettleAlgorithmsTck.settled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import java.time.Duration;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * The contract around a settle, on every store: once only (a second settle is {@link Settlement#NOT_PENDING} and
 * changes nothing), expiry at {@code settleWithin} by the store's clock (the estimate stands), a denied estimate
 * leaves nothing pending, a duplicate pending id is refused and takes nothing, and bad input is refused, naming the
 * value, before anything changes. Through the synchronous and the asynchronous view.
 */
public interface SettleContractTck extends SettleAlgorithmsTck {

    @Test
    default void aSettleHappensOnceAndASecondOneChangesNothing() {
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1));
        bothViews("settle-once", (rl, t, v, k) -> {
            assertThat(v.settle(rl, k, l, "never", 0)).isEqualTo(Settlement.NOT_PENDING);
            v.reserve(rl, k, l, 4, "x", WITHIN);
            assertThat(v.settle(rl, k, l, "x", 1)).isEqualTo(settled(4, -3, 9));
            assertThat(v.settle(rl, k, l, "x", 1)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(v.settle(rl, k, l, "x", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(v.settle(rl, k, l, "x", 10)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(9);
        });
    }

    @Test
    default void aReservationNotSettledWithinItsTimeExpiresAndItsEstimateStands() {
        Limit l = Limit.fixedWindow(10, Duration.ofHours(1));
        Duration within = Duration.ofSeconds(10);
        bothViews("settle-expiry", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 4, "late", within);
            v.reserve(rl, k, l, 3, "just", within);
            t.advanceNanos(within.toNanos() - Tck.MICRO);
            assertThat(v.settle(rl, k, l, "just", 0)).isEqualTo(settled(3, -3, 6));
            t.advanceNanos(Tck.MICRO);
            assertThat(v.settle(rl, k, l, "late", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.peek(k, l, 1).remaining()).as("the estimate stands").isEqualTo(6);
            // the id is free again once its reservation expired
            assertThat(v.reserve(rl, k, l, 1, "late", within).allowed()).isTrue();
            assertThat(v.settle(rl, k, l, "late", 2)).isEqualTo(settled(1, 1, 4));
        });
    }

    @Test
    default void aDeniedEstimateLeavesNothingPending() {
        Limit l = Limit.tokenBucket(2, Rate.perHour(1));
        bothViews("settle-denied", (rl, t, v, k) -> {
            rl.tryAcquire(k, l, 2);
            assertThat(v.reserve(rl, k, l, 1, "x", WITHIN).allowed()).isFalse();
            assertThat(v.settle(rl, k, l, "x", 0)).isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.peek(k, l, 1).allowed()).as("nothing was given back").isFalse();
        });
    }

    @Test
    default void aDuplicatePendingIdIsRefusedAndTakesNothing() {
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        Limit other = Limit.fixedWindow(10, Duration.ofHours(1));
        bothViews("settle-duplicate", (rl, t, v, k) -> {
            v.reserve(rl, k, l, 2, "x", WITHIN);
            assertThatThrownBy(() -> v.reserve(rl, k, l, 3, "x", WITHIN))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'x'")
                    .hasMessageContaining("already pending")
                    .hasMessageContaining("new id");
            assertThat(rl.peek(k, l, 1).remaining())
                    .as("the duplicate took nothing")
                    .isEqualTo(8);
            // an id is the caller's per key and limit
            assertThat(v.reserve(rl, k + ":2", l, 3, "x", WITHIN).allowed()).isTrue();
            assertThat(v.reserve(rl, k, other, 3, "x", WITHIN).allowed()).isTrue();
            assertThat(v.settle(rl, k, l, "x", 2)).isEqualTo(settled(2, 0, 8));
            assertThat(v.reserve(rl, k, l, 3, "x", WITHIN).allowed())
                    .as("free once settled")
                    .isTrue();
            assertThat(v.settle(rl, k + ":2", l, "x", 3)).isEqualTo(settled(3, 0, 7));
            assertThat(v.settle(rl, k, other, "x", 3)).isEqualTo(settled(3, 0, 7));
        });
    }

    /**
     * Bad ids, settle windows, estimates and actual costs are refused by the call itself (the asynchronous forms too),
     * naming the value, and change nothing: the reservation pending before is still pending after them.
     */
    @SuppressWarnings("NullAway") // passes null on purpose, to see it refused
    @Test
    default void badInputIsRefusedNamingTheValueAndChangesNothing() {
        Limit l = Limit.tokenBucket(10, Rate.perHour(1));
        ManualTicker t = Tck.ticker();
        String k = Tck.key("settle-bad");
        String tooLong = "i".repeat(Settlement.MAX_ID_LENGTH + 1);
        try (RateLimiter rl = newLimiter(t)) {
            rl.tryAcquireEstimate(k, l, 4, "ok", WITHIN);
            for (boolean async : new boolean[] {false, true}) {
                refused(async, rl, k, l, 0, "y", WITHIN, "cost 0 must be at least 1");
                refused(async, rl, k, l, 11, "y", WITHIN, "cost 11 exceeds capacity 10");
                refused(async, rl, k, l, 1, "", WITHIN, "reservation id is empty");
                refused(async, rl, k, l, 1, null, WITHIN, "reservation id is empty");
                refused(async, rl, k, l, 1, "a b", WITHIN, "reservation id 'a b'");
                refused(async, rl, k, l, 1, tooLong, WITHIN, "is 129 characters long");
                refused(async, rl, k, l, 1, "y", Duration.ZERO, "settleWithin PT0S is out of range");
                refused(async, rl, k, l, 1, "y", Duration.ofSeconds(-1), "settleWithin PT-1S is out of range");
                refused(async, rl, k, l, 1, "y", Duration.ofHours(25), "settleWithin PT25H is out of range");
                refused(async, rl, k, l, 1, "y", null, "settleWithin null is out of range");
                refusedSettle(async, rl, k, l, "ok", -1, "actual cost -1 is out of range");
                refusedSettle(async, rl, k, l, "ok", 11, "actual cost 11 is out of range");
                refusedSettle(async, rl, k, l, "", 1, "reservation id is empty");
                refusedSettle(async, rl, k, l, "a b", 1, "reservation id 'a b'");
                refusedSettle(async, rl, k, l, tooLong, 1, "is 129 characters long");
            }
            assertThat(rl.peek(k, l, 1).remaining()).isEqualTo(6);
            assertThat(rl.settle(k, l, "y", 0))
                    .as("no bad reservation was kept")
                    .isEqualTo(Settlement.NOT_PENDING);
            assertThat(rl.settle(k, l, "ok", 4)).isEqualTo(settled(4, 0, 6));
        }
    }

    private static void refused(
            boolean async,
            RateLimiter rl,
            String k,
            Limit l,
            long estimate,
            String id,
            Duration within,
            String message) {
        ThrowingCallable call = async
                ? () -> rl.tryAcquireEstimateAsync(k, l, estimate, id, within)
                : () -> rl.tryAcquireEstimate(k, l, estimate, id, within);
        assertThatThrownBy(call)
                .as("%s tryAcquireEstimate(%d, %s, %s)", async ? "async" : "sync", estimate, id, within)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    private static void refusedSettle(
            boolean async, RateLimiter rl, String k, Limit l, String id, long actual, String message) {
        ThrowingCallable call = async ? () -> rl.settleAsync(k, l, id, actual) : () -> rl.settle(k, l, id, actual);
        assertThatThrownBy(call)
                .as("%s settle(%s, %d)", async ? "async" : "sync", id, actual)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }
}
