package dev.sluice.server.config;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import java.time.Duration;
import java.util.List;

/**
 * One {@code rate_limit} block of a rules file, with the descriptor flags that go with it.
 *
 * <p>{@link Kind#LIMITED} rules carry a {@link Limit}; {@link Kind#UNLIMITED} ({@code unlimited: true}) and
 * {@link Kind#BLOCKED} ({@code requests_per_unit: 0}, envoy's way to ban a value) are answered without touching
 * the store.
 *
 * @param id            the rule's place in the file, envoy style: {@code domain.key_value.subkey}; the metrics label
 * @param name          {@code rate_limit.name}, the target of other rules' {@code replaces}; may be null
 * @param unit          envoy's unit ({@code second} … {@code year}) or null when {@code window:} was given
 * @param source        {@code file:line} of the {@code rate_limit} block, for messages
 */
public record Rule(String id, String name, List<String> replaces, Kind kind, Limit limit, Algorithm algorithm,
                   long requestsPerUnit, String unit, Duration window, long capacity, boolean shadowMode,
                   boolean detailedMetric, String source) {

    public enum Kind { LIMITED, UNLIMITED, BLOCKED }

    /** The label used in {@code RateLimit-Policy} and {@code RateLimit} headers: the name, else the id. */
    public String policyName() {
        return name != null ? name : id;
    }
}
