package dev.sluice.bench;

import dev.sluice.Limit;
import dev.sluice.Rate;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import java.time.Duration;

/**
 * The two workloads every hot-key contender is configured for, with the same numbers for each library, so
 * that a benchmark measures real limiting work and the allowed/denied mix is known (the benchmarks also
 * count it: see {@link Outcomes}).
 *
 * <ul>
 *   <li>{@link #ADMITTING}: capacity 10⁹, refilled at 3·10⁸ per second (a permit every 3⅓ ns). No
 *       contender here comes near 3·10⁸ calls a second, so every call is allowed and every call writes new
 *       state (a CAS in every lock-free contender). The rate is deliberately not a divisor of a second in
 *       nanoseconds: Sluice's exact arithmetic takes its general path (time in thirds of a nanosecond),
 *       not the shortcut a round rate would allow.</li>
 *   <li>{@link #DENYING}: capacity 100, refilled at 1,000 per second. After the first 100 calls one call
 *       in tens of thousands is allowed; the rest are denied, which in Sluice and Bucket4j is a read with
 *       no write.</li>
 * </ul>
 *
 * Guava's bucket holds one second of permits (it has no separate capacity).
 * Resilience4j has no bucket, only a number of permits per refresh period: the admitting workload is
 * {@code Integer.MAX_VALUE} permits a second (never exhausted here), the denying one 1 permit per
 * millisecond (the same 1,000 a second).
 */
public enum Mix {
    ADMITTING(1_000_000_000L, 300_000_000L),
    DENYING(100, 1_000);

    /** Bucket size (token bucket), burst (GCRA). */
    public final long capacity;
    /** Refill, permits per second. */
    public final long perSecond;

    Mix(long capacity, long perSecond) {
        this.capacity = capacity;
        this.perSecond = perSecond;
    }

    public Limit sluiceTokenBucket() {
        return Limit.tokenBucket(capacity, Rate.perSecond(perSecond));
    }

    public Limit sluiceGcra() {
        return Limit.gcra(Rate.perSecond(perSecond), capacity);
    }

    /**
     * A Bucket4j lock-free bucket, as users build one: greedy refill, Bucket4j's default (millisecond)
     * clock.
     */
    public Bucket bucket4j() {
        return Bucket.builder()
                .addLimit(l -> l.capacity(capacity).refillGreedy(perSecond, Duration.ofSeconds(1)))
                .withSynchronizationStrategy(SynchronizationStrategy.LOCK_FREE)
                .build();
    }

    public com.google.common.util.concurrent.RateLimiter guava() {
        return com.google.common.util.concurrent.RateLimiter.create((double) perSecond);
    }

    public AtomicRateLimiter resilience4j() {
        RateLimiterConfig config = this == ADMITTING
                ? RateLimiterConfig.custom()
                        .limitForPeriod(Integer.MAX_VALUE)
                        .limitRefreshPeriod(Duration.ofSeconds(1))
                        .timeoutDuration(Duration.ZERO)
                        .build()
                : RateLimiterConfig.custom()
                        .limitForPeriod(1)
                        .limitRefreshPeriod(Duration.ofMillis(1))
                        .timeoutDuration(Duration.ZERO)
                        .build();
        return new AtomicRateLimiter("bench-" + name().toLowerCase(java.util.Locale.ROOT), config);
    }

    /** The floor's interval is whole nanoseconds: 3 ns (admitting), 1 ms (denying). */
    public CasGcra casGcra() {
        return new CasGcra(1_000_000_000L / perSecond, capacity);
    }
}
