package dev.sluice.gateway;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.LimitSpec;
import dev.sluice.Rate;
import dev.sluice.RateUnit;
import java.time.Duration;
import java.util.Collection;
import org.jspecify.annotations.Nullable;

/**
 * A route's {@link SluiceRateLimiter.Config} read into what a decision needs: the {@link Limit}, the cost of one
 * request, and the constant values of RedisRateLimiter's headers. Built once per configuration and checked there,
 * so a bad route fails when the gateway loads it, naming the route, the argument and the fix, not on every
 * request.
 *
 * <p>Two vocabularies, one of them per route:
 * <ul>
 *   <li>RedisRateLimiter's, with its meaning and defaults: a token bucket of {@code burstCapacity} tokens (default
 *       1) refilled at {@code replenishRate} tokens per second, each request spending {@code requestedTokens}
 *       (default 1). {@code burstCapacity: 0} denies every request, as in Spring Cloud Gateway;</li>
 *   <li>Sluice's, as in {@code sluice.rules} and the service's YAML: {@code requests_per_unit} per {@code unit}
 *       (or any {@code window}), with an {@code algorithm} (default fixed_window, as everywhere in Sluice) and,
 *       for token_bucket and gcra, a {@code burst}. {@code requestedTokens} is the cost here too.</li>
 * </ul>
 * One deliberate difference: RedisRateLimiter accepts a {@code requestedTokens} above {@code burstCapacity} and
 * then denies every request forever; here, as everywhere in Sluice, a cost that can never be granted is a
 * configuration error.
 *
 * @param limit null when the route denies every request ({@code burstCapacity: 0})
 * @param replenishRate the X-RateLimit-Replenish-Rate value, or null for Sluice's vocabulary (its rate need not be
 *                      a whole number per second; RateLimit-Policy states it exactly)
 * @param burstCapacity the X-RateLimit-Burst-Capacity value: burstCapacity, or the limit's capacity
 */
record RouteLimit(
        @Nullable Limit limit,
        long cost,
        @Nullable String replenishRate,
        String burstCapacity,
        String requestedTokens) {

    /**
     * The name of every route's limit: its identity, so that a route whose numbers change (its arguments rebound)
     * keeps each key's state under the new numbers. One name serves every route: a route's keys begin with its id.
     */
    static final String NAME = "gateway-route";

    /**
     * Reads {@code c}; {@code where} names the route in messages.
     *
     * @throws IllegalArgumentException naming the route, the argument and the fix
     */
    static RouteLimit of(String where, SluiceRateLimiter.Config c) {
        String arg = where + ": " + SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME + ".";
        boolean sluiceWords = c.getRequestsPerUnit() != null
                || c.getUnit() != null
                || c.getWindow() != null
                || c.getAlgorithm() != null
                || c.getBurst() != null;
        boolean redisWords = c.replenishRateIfSet() != null || c.burstCapacityIfSet() != null;
        if (sluiceWords && redisWords) {
            throw new IllegalArgumentException(where + ": " + SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME
                    + " has both replenishRate/burstCapacity (RedisRateLimiter's words) and"
                    + " requests_per_unit/unit/window/algorithm/burst (Sluice's): keep one of the two");
        }
        long cost = c.getRequestedTokens();
        if (cost < 1) {
            throw new IllegalArgumentException(
                    arg + "requestedTokens " + cost + " must be at least 1: the tokens each request spends");
        }
        return sluiceWords ? sluice(where, arg, c, cost) : redis(arg, c, cost);
    }

    /**
     * The message for a route whose {@code RequestRateLimiter} decides with Sluice but that has no
     * {@code sluice-rate-limiter.*} arguments (and no default config or default-filters' to fall back on).
     *
     * @param others the route's arguments of another rate limiter ({@code redis-rate-limiter.replenishRate}), or
     *               null
     */
    static String missing(String where, @Nullable Collection<String> others) {
        String p = SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME + ".";
        StringBuilder m = new StringBuilder(where)
                .append(": its RequestRateLimiter decides with Sluice but it has no ")
                .append(p)
                .append("* arguments");
        if (others != null && !others.isEmpty()) {
            m.append(" (it has ")
                    .append(String.join(", ", others))
                    .append(", another rate limiter's: rename them ")
                    .append(p)
                    .append("*)");
        }
        return m.append(": give ")
                .append(p)
                .append("replenishRate and ")
                .append(p)
                .append("burstCapacity")
                .append(" (RedisRateLimiter's words) or ")
                .append(p)
                .append("requests_per_unit with ")
                .append(p)
                .append("unit or ")
                .append(p)
                .append("window (Sluice's), on the route or in default-filters")
                .toString();
    }

    private static RouteLimit redis(String arg, SluiceRateLimiter.Config c, long cost) {
        long burstCapacity = c.getBurstCapacity();
        long replenishRate = c.getReplenishRate();
        String headerRate = Long.toString(replenishRate);
        if (burstCapacity < 0) {
            throw new IllegalArgumentException(
                    arg + "burstCapacity " + burstCapacity + " must be at least 0 (0 denies every request)");
        }
        if (burstCapacity == 0) { // Spring Cloud Gateway's way to close a route: nothing can ever pass
            return new RouteLimit(null, cost, headerRate, "0", Long.toString(cost));
        }
        if (replenishRate < 1) {
            throw new IllegalArgumentException(arg + "replenishRate " + replenishRate
                    + " must be at least 1: tokens added per second, e.g. replenishRate: 10 with burstCapacity: 20"
                    + " (for less than one a second, set requestedTokens to the seconds per request and"
                    + " burstCapacity to replenishRate × requestedTokens)");
        }
        if (cost > burstCapacity) {
            throw new IllegalArgumentException(arg + "requestedTokens " + cost + " exceeds burstCapacity "
                    + burstCapacity + ": no request could ever pass; raise burstCapacity or lower requestedTokens");
        }
        Limit limit =
                Limit.tokenBucket(burstCapacity, Rate.perSecond(replenishRate)).named(NAME);
        return new RouteLimit(limit, cost, headerRate, Long.toString(burstCapacity), Long.toString(cost));
    }

    private static RouteLimit sluice(String where, String arg, SluiceRateLimiter.Config c, long cost) {
        Algorithm algorithm = Algorithm.FIXED_WINDOW;
        if (c.getAlgorithm() != null) {
            try {
                algorithm = Algorithm.fromConfigName(c.getAlgorithm());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(arg + "algorithm: " + e.getMessage(), e);
            }
        }
        if (c.getRequestsPerUnit() == null) {
            throw new IllegalArgumentException(arg + "requests_per_unit is missing: say how many requests, e.g."
                    + " requests_per_unit: 100 with unit: minute");
        }
        Duration window;
        if (c.getUnit() != null && c.getWindow() != null) {
            throw new IllegalArgumentException(arg + "window: both unit and window are set: give one (window: 90s"
                    + " is any length, unit is the service's)");
        } else if (c.getUnit() != null) {
            try {
                window = RateUnit.fromConfigName(c.getUnit()).length();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(arg + "unit: " + e.getMessage(), e);
            }
        } else if (c.getWindow() != null) {
            window = c.getWindow();
        } else {
            throw new IllegalArgumentException(
                    arg + "unit is missing: give unit (second, minute, hour, day) or" + " window (e.g. 90s)");
        }
        Limit limit;
        try { // LimitSpec refuses a burst on an algorithm without one, naming it
            limit = new LimitSpec(algorithm, c.getRequestsPerUnit(), window, c.getBurst()).toLimit();
            limit.checkCost(cost); // its message names the numbers
            limit = limit.named(NAME);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    where + ": " + SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME + ": " + e.getMessage(), e);
        }
        return new RouteLimit(limit, cost, null, Long.toString(limit.capacity()), Long.toString(cost));
    }
}
