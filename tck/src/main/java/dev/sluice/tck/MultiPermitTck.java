package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Multi-permit requests: all or nothing. Keys of one request share a Redis hash tag
 * ({@code {…}} in {@link Tck#key(String)}), so cluster stores can decide them in one script.
 */
public interface MultiPermitTck extends StoreUnderTest {

    @Test
    default void multiPermitTakesEverythingOrNothing() {
        ManualTicker t = Tck.ticker();
        Limit perUser = Limit.tokenBucket(5, Rate.perSecond(1)).named("per-user");
        Limit perIp = Limit.fixedWindow(3, Duration.ofSeconds(1)).named("per-ip");
        String base = Tck.key("multi");
        String user = base + ":user";
        String ip = base + ":ip";
        try (RateLimiter rl = newLimiter(t)) {
            List<Permit> both = List.of(Permit.of(user, perUser), Permit.of(ip, perIp));
            for (int i = 0; i < 3; i++) {
                Decision d = rl.tryAcquire(both);
                assertThat(d.allowed()).isTrue();
                assertThat(d.remaining()).isEqualTo(2 - i);
                assertThat(d.limit()).isEqualTo(3);
            }
            Decision denied = rl.tryAcquire(both);
            assertThat(denied.allowed()).isFalse();
            assertThat(denied.remaining()).isZero();
            assertThat(denied.retryAfterNanos()).isEqualTo(Tck.s(1));
            // the per-user bucket kept its two tokens: nothing was taken by the denied request
            assertThat(rl.tryAcquire(user, perUser, 2)).isEqualTo(allowed(5, 0, Tck.s(5)));
        }
    }

    @Test
    default void multiPermitReportsTheMostRestrictiveDecision() {
        ManualTicker t = Tck.ticker();
        Limit wide = Limit.tokenBucket(100, Rate.perSecond(10));
        Limit narrow = Limit.tokenBucket(4, Rate.perSecond(1));
        String base = Tck.key("multi-agg");
        try (RateLimiter rl = newLimiter(t)) {
            Decision d = rl.tryAcquire(List.of(Permit.of(base + ":a", wide, 3), Permit.of(base + ":b", narrow, 3)));
            // remaining and limit from the narrow one; resetAfter the larger of 0.3 s and 3 s
            assertThat(d).isEqualTo(allowed(4, 1, Tck.s(3)));
        }
    }

    @Test
    default void multiPermitAppliesRepeatedKeysOneAfterAnother() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(5, Rate.perSecond(1));
        String k = Tck.key("multi-same");
        try (RateLimiter rl = newLimiter(t)) {
            Decision d = rl.tryAcquire(List.of(Permit.of(k, l, 3), Permit.of(k, l, 3)));
            assertThat(d.allowed()).as("3 + 3 exceeds 5").isFalse();
            assertThat(rl.tryAcquire(List.of(Permit.of(k, l, 2), Permit.of(k, l, 3))))
                    .isEqualTo(allowed(5, 0, Tck.s(5)));
        }
    }

    @Test
    default void multiPermitWithOnePermitDecidesLikeASingleCall() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.slidingWindow(3, Duration.ofSeconds(1));
        String k = Tck.key("multi-one");
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(List.of(Permit.of(k, l, 2)))).isEqualTo(allowed(3, 1, Tck.s(2)));
            assertThat(rl.tryAcquire(k, l, 1)).isEqualTo(allowed(3, 0, Tck.s(2)));
        }
    }

    @Test
    default void multiPermitRejectsAnEmptyList() {
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            assertThatThrownBy(() -> rl.tryAcquire(List.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
        }
    }
}
