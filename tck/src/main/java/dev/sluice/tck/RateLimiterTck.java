package dev.sluice.tck;

/**
 * The whole conformance suite. A store is done when a test class implementing this interface (and
 * {@link StoreUnderTest#newLimiter}) is green:
 * <pre>{@code
 * class InMemoryConformanceTest implements RateLimiterTck {
 *     public RateLimiter newLimiter(Ticker ticker) {
 *         return InMemoryRateLimiter.builder().ticker(ticker).build();
 *     }
 * }
 * }</pre>
 */
public interface RateLimiterTck
        extends TokenBucketTck,
                GcraTck,
                FixedWindowTck,
                SlidingWindowTck,
                SlidingLogTck,
                MultiPermitTck,
                EachPermitTck,
                ReserveTck,
                ResetTck,
                PeekTck,
                BadInputTck,
                DifferentialTck,
                LimitChangeTck,
                ConcurrencyTck,
                BoundLimitTck,
                SettleTck,
                InFlightTck {}
