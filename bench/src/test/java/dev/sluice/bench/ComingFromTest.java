package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every row of the README's "Coming from another limiter" table, run: the other library's call and Sluice's, side by
 * side on the same numbers, with the same verdicts. Rates are slow (a permit an hour) where a verdict is compared,
 * so that no refill can fall between two calls however busy the machine; the blocking rows use fast rates and check
 * that the call returns.
 */
class ComingFromTest {

    private final RateLimiter limiter = InMemoryRateLimiter.create();

    @Test
    void guava() throws InterruptedException {
        // RateLimiter.create(r): r permits a second, at most one second's worth stored while idle
        com.google.common.util.concurrent.RateLimiter guava = com.google.common.util.concurrent.RateLimiter.create(1.0 / 3600);
        BoundLimit sluice = limiter.bind("guava", Limit.gcra(Rate.perHour(1), 1));
        assertThat(guava.tryAcquire()).isEqualTo(sluice.tryAcquire().allowed()).isTrue();
        assertThat(guava.tryAcquire()).isEqualTo(sluice.tryAcquire().allowed()).isFalse();
        assertThat(guava.tryAcquire(1, 10, TimeUnit.MILLISECONDS))
                .isEqualTo(sluice.tryAcquire(1, Duration.ofMillis(10))).isFalse();

        assertThat(guava.tryAcquire(1)).isEqualTo(sluice.tryAcquire(1).allowed()).isFalse();
        assertThat(guava.tryAcquire()).isEqualTo(sluice.tryAcquirePermit()).isFalse();
        assertThat(guava.tryAcquire(1)).isEqualTo(sluice.tryAcquirePermits(1)).isFalse();
        guava.setRate(1000);
        BoundLimit faster = limiter.bind("guava", Limit.gcra(Rate.perSecond(1000), 1)); // a new limit: its own state
        assertThat(faster.tryAcquirePermit()).isTrue();

        com.google.common.util.concurrent.RateLimiter fastGuava = com.google.common.util.concurrent.RateLimiter.create(1000);
        BoundLimit fast = limiter.bind("guava-fast", Limit.tokenBucket(1000, Rate.perSecond(1000)));
        fastGuava.acquire();
        fast.acquire();
        fastGuava.acquire(2);
        fast.acquire(2);
    }

    @Test
    void bucket4j() throws InterruptedException {
        Bucket bucket = Bucket.builder().addLimit(l -> l.capacity(10).refillGreedy(1, Duration.ofHours(1))).build();
        BoundLimit sluice = limiter.bind("bucket4j", Limit.tokenBucket(10, Rate.perHour(1)));
        assertThat(bucket.tryConsume(4)).isEqualTo(sluice.tryAcquire(4).allowed()).isTrue();
        ConsumptionProbe probe = bucket.tryConsumeAndReturnRemaining(1);
        Decision d = sluice.tryAcquire(1);
        assertThat(probe.isConsumed()).isEqualTo(d.allowed()).isTrue();
        assertThat(probe.getRemainingTokens()).isEqualTo(d.remaining()).isEqualTo(5);
        assertThat(bucket.getAvailableTokens()).isEqualTo(sluice.peek().remaining()).isEqualTo(5);
        assertThat(bucket.tryConsume(6)).isEqualTo(sluice.tryAcquire(6).allowed()).isFalse();
        assertThat(bucket.tryConsume(6)).isEqualTo(sluice.tryAcquirePermits(6)).isFalse();
        assertThat(bucket.tryConsume(1)).isEqualTo(sluice.tryAcquirePermits(1)).isTrue();
        assertThat(bucket.getAvailableTokens()).isEqualTo(sluice.peek().remaining()).isEqualTo(4);
        assertThat(bucket.asBlocking().tryConsume(6, Duration.ofMillis(10)))
                .isEqualTo(sluice.tryAcquire(6, Duration.ofMillis(10))).isFalse();
        bucket.reset();
        sluice.reset();
        assertThat(bucket.getAvailableTokens()).isEqualTo(sluice.peek().remaining()).isEqualTo(10);

        Bucket fastBucket = Bucket.builder().addLimit(l -> l.capacity(1000).refillGreedy(1000, Duration.ofSeconds(1))).build();
        BoundLimit fast = limiter.bind("bucket4j-fast", Limit.tokenBucket(1000, Rate.perSecond(1000)));
        fastBucket.asBlocking().consume(1);
        fast.acquire();
    }

    @Test
    void resilience4j() throws InterruptedException {
        // both count permits per period; Resilience4j's periods start when it is created, Sluice's windows at the
        // epoch, so a first period may be shorter: periods of 1,000 days keep both far from their end here
        Duration period = Duration.ofDays(1000);
        RateLimiterConfig config = RateLimiterConfig.custom().limitForPeriod(2).limitRefreshPeriod(period)
                .timeoutDuration(Duration.ZERO).build();
        io.github.resilience4j.ratelimiter.RateLimiter r4j = io.github.resilience4j.ratelimiter.RateLimiter.of("r4j", config);
        BoundLimit sluice = limiter.bind("r4j", Limit.fixedWindow(2, period));
        assertThat(r4j.acquirePermission()).isEqualTo(sluice.tryAcquire().allowed()).isTrue();
        assertThat(r4j.acquirePermission(1)).isEqualTo(sluice.tryAcquire(1).allowed()).isTrue();
        assertThat(r4j.acquirePermission()).isEqualTo(sluice.tryAcquire().allowed()).isFalse();
        assertThat(r4j.acquirePermission()).isEqualTo(sluice.tryAcquirePermit()).isFalse();
        assertThat(r4j.acquirePermission(1)).isEqualTo(sluice.tryAcquirePermits(1)).isFalse();
        io.github.resilience4j.ratelimiter.RateLimiter waiting = io.github.resilience4j.ratelimiter.RateLimiter.of("r4j-wait",
                RateLimiterConfig.from(config).timeoutDuration(Duration.ofMillis(10)).build());
        waiting.acquirePermission(2);
        assertThat(waiting.acquirePermission()).isEqualTo(sluice.tryAcquire(1, Duration.ofMillis(10))).isFalse();
    }
}
