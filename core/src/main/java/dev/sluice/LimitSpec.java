package dev.sluice;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A limit as configuration states it: {@code requestsPerUnit} per {@code window} (an envoy {@link RateUnit}'s
 * length or any other), with an {@link Algorithm} and, for the token bucket and GCRA, a {@code burst} (the
 * capacity; by default {@code requestsPerUnit}). The service's YAML, its JSON API, its gRPC limit override and the
 * Spring properties all read into this and build their {@link Limit} here, so the same words mean the same limit
 * everywhere and are refused with the same message.
 *
 * @param burst null for the default
 */
public record LimitSpec(
        Algorithm algorithm,
        long requestsPerUnit,
        Duration window,
        @Nullable Long burst) {

    public LimitSpec {
        Objects.requireNonNull(algorithm, "algorithm must not be null: e.g. Algorithm.FIXED_WINDOW");
        Objects.requireNonNull(window, "window must not be null: e.g. RateUnit.MINUTE.length()");
        if (burst != null && !algorithm.isTat()) {
            throw new IllegalArgumentException("'burst' applies to token_bucket and gcra, not " + algorithm.configName()
                    + ": remove it or use algorithm token_bucket");
        }
    }

    /** {@code requestsPerUnit} per {@code unit} with {@code algorithm} and the default burst. */
    public static LimitSpec of(Algorithm algorithm, long requestsPerUnit, RateUnit unit) {
        return new LimitSpec(algorithm, requestsPerUnit, unit.length(), null);
    }

    /**
     * The core limit.
     *
     * @throws IllegalArgumentException naming the bad value, as {@link Limit}'s factories do
     */
    public Limit toLimit() {
        long capacity = burst != null ? burst : requestsPerUnit;
        return switch (algorithm) {
            case FIXED_WINDOW -> Limit.fixedWindow(requestsPerUnit, window);
            case SLIDING_WINDOW -> Limit.slidingWindow(requestsPerUnit, window);
            case SLIDING_LOG -> Limit.slidingLog(requestsPerUnit, window);
            case TOKEN_BUCKET -> Limit.tokenBucket(capacity, Rate.of(requestsPerUnit, window));
            case GCRA -> Limit.gcra(Rate.of(requestsPerUnit, window), capacity);
        };
    }
}
