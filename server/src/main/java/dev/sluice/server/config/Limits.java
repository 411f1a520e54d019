package dev.sluice.server.config;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.Rate;
import java.time.Duration;

/** Builds a core {@link Limit} from the rules' vocabulary; shared by the YAML and the HTTP limit override. */
public final class Limits {
    private Limits() {
    }

    /**
     * {@code requestsPerUnit} per {@code window} with {@code algorithm}; {@code burst} (token_bucket, gcra only)
     * defaults to {@code requestsPerUnit}.
     *
     * @throws IllegalArgumentException naming the bad value
     */
    public static Limit build(Algorithm algorithm, long requestsPerUnit, Duration window, Long burst) {
        if (burst != null && !algorithm.isTat()) {
            throw new IllegalArgumentException("'burst' applies to token_bucket and gcra, not " + algorithm.configName()
                    + ": remove it or use algorithm token_bucket");
        }
        long capacity = burst != null ? burst : requestsPerUnit;
        return switch (algorithm) {
            case FIXED_WINDOW -> Limit.fixedWindow(requestsPerUnit, window);
            case SLIDING_WINDOW -> Limit.slidingWindow(requestsPerUnit, window);
            case SLIDING_LOG -> Limit.slidingLog(requestsPerUnit, window);
            case TOKEN_BUCKET -> Limit.tokenBucket(capacity, Rate.of(requestsPerUnit, window));
            case GCRA -> Limit.gcra(Rate.of(requestsPerUnit, window), capacity);
        };
    }

    /** The unit length of envoy's unit name ({@code second} … {@code year}), or null. */
    public static Duration unit(String name) {
        return RulesParser.UNITS.get(name);
    }

    /** The unit names, in order. */
    public static Iterable<String> unitNames() {
        return RulesParser.UNITS.keySet();
    }
}
