package dev.sluice.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import java.math.BigInteger;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Properties of the pure steps, on random states: a denied call is allowed exactly {@code retryAfter} later
 * and not one nanosecond sooner; {@code resetAfter} later the key decides like a fresh one; a denied call
 * leaves the state as it was.
 */
class ExactDecisionsTest {
    private static final long T0 = 1_767_225_600L * 1_000_000_000L;

    private static final List<Limit> LIMITS = List.of(
            Limit.tokenBucket(10, Rate.perSecond(3)),
            Limit.tokenBucket(7, Rate.of(13, Duration.ofMillis(17))),
            Limit.gcra(Rate.of(999_983, Duration.ofSeconds(1)), 5),
            Limit.fixedWindow(9, Duration.ofMillis(7)),
            Limit.slidingWindow(11, Duration.ofMillis(13)),
            Limit.slidingWindow(1_000_000, Duration.ofDays(3)),
            Limit.slidingLog(6, Duration.ofMillis(5)));

    @Test
    void retryAfterIsExactAndResetAfterReachesFreshState() {
        SplittableRandom random = new SplittableRandom(42);
        for (Limit limit : LIMITS) {
            State state = Algorithms.fresh(limit);
            long now = T0 + random.nextLong(0, 1_000_000_000L);
            int denials = 0;
            for (int i = 0; i < 5_000; i++) {
                now += random.nextInt(4) == 0 ? 0 : random.nextLong(0, limit.periodNanos() / 4 + 2);
                long cost = 1 + random.nextLong(limit.capacity());
                Step step = Algorithms.tryAcquire(state, now, limit, cost);
                Decision d = step.decision();
                Decision peek = Algorithms.peek(state, now, limit, cost);
                assertThat(peek.allowed()).as("peek agrees with tryAcquire").isEqualTo(d.allowed());
                if (!d.allowed()) {
                    assertThat(peek).as("a denied peek is the denied decision").isEqualTo(d);
                } else {
                    assertThat(peek.remaining()).as("peek takes nothing").isGreaterThanOrEqualTo(d.remaining() + cost);
                }
                if (d.allowed()) {
                    assertThat(d.retryAfterNanos()).isZero();
                    assertThat(d.remaining()).isLessThanOrEqualTo(limit.capacity() - cost);
                } else {
                    denials++;
                    assertThat(step.state())
                            .as("a denied call consumes nothing")
                            .isSameAs(state);
                    long r = d.retryAfterNanos();
                    assertThat(r).isPositive();
                    assertThat(Algorithms.tryAcquire(state, now + r, limit, cost)
                                    .decision()
                                    .allowed())
                            .as("%s allowed at retryAfter %d", limit, r)
                            .isTrue();
                    assertThat(Algorithms.tryAcquire(state, now + r - 1, limit, cost)
                                    .decision()
                                    .allowed())
                            .as("%s denied 1 ns before retryAfter %d", limit, r)
                            .isFalse();
                }
                long reset = d.resetAfterNanos();
                long probe = 1 + random.nextLong(limit.capacity());
                assertThat(Algorithms.tryAcquire(step.state(), now + reset, limit, probe)
                                .decision())
                        .as("%s fresh at resetAfter", limit)
                        .isEqualTo(Algorithms.tryAcquire(Algorithms.fresh(limit), now + reset, limit, probe)
                                .decision());
                state = step.state();
            }
            assertThat(denials).as("%s saw denials", limit).isGreaterThan(100);
        }
    }

    @Test
    void exactArithmeticHandlesProductsBeyond64Bits() {
        long a = 3_000_000_000_000L;
        long b = 7_000_000_000_000L;
        long c = 11_000_000_007L;
        BigInteger p = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b));
        assertThat(Exact.mulDivFloor(a, b, c))
                .isEqualTo(p.divide(BigInteger.valueOf(c)).longValueExact());
        assertThat(Exact.mulDivCeil(a, b, c))
                .isEqualTo(p.divide(BigInteger.valueOf(c)).longValueExact() + 1);
        assertThat(Exact.productLessOrEqual(a, b, b, a)).isTrue();
        assertThat(Exact.productLessOrEqual(a, b + 1, b, a)).isFalse();
        assertThat(Exact.ceilDiv(10, 3)).isEqualTo(4);
        assertThat(Exact.ceilDiv(9, 3)).isEqualTo(3);
        assertThat(Exact.saturatingMultiply(Long.MAX_VALUE / 2, 3)).isEqualTo(Long.MAX_VALUE);
    }
}
