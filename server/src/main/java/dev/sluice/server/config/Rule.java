package dev.sluice.server.config;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One {@code rate_limit} block of a rules file, with the descriptor flags that go with it.
 *
 * <p>{@link Kind#LIMITED} rules carry a {@link Limit}; {@link Kind#UNLIMITED} ({@code unlimited: true}) and
 * {@link Kind#BLOCKED} ({@code requests_per_unit: 0}, envoy's way to ban a value) are answered without touching
 * the store.
 *
 * @param id            the rule's place in the file, envoy style: {@code domain.key_value.subkey}; the default metrics
 *                      label (see {@link DomainRules#match} for the others)
 * @param name          {@code rate_limit.name}, the target of other rules' {@code replaces}; may be null
 * @param unit          envoy's unit ({@code second} … {@code year}) or null when {@code window:} was given
 * @param shadowMode    {@code shadow_mode} of the descriptor: evaluated and counted, but always answered OK
 * @param quotaMode     {@code quota_mode} of the descriptor: envoy's quota descriptor, whose being over the limit makes
 *                      the request over the limit only when every quota descriptor of the request is
 * @param detailedMetric {@code detailed_metric} of the descriptor: the metrics label carries the values sent
 * @param metadata      {@code metadata} of the descriptor (envoy returns it in the response's dynamic metadata): an
 *                      unmodifiable mapping of String keys to String, Long, Double, Boolean, null, and unmodifiable
 *                      List and Map values of the same; null when the descriptor has none (or an empty one)
 * @param source        {@code file:line} of the {@code rate_limit} block, for messages
 * @param streamDone    {@code charge_on_stream_done} or {@code reservation} of the descriptor: what a cost reported
 *                      when the work ends does ({@link StreamDone}); null for neither (the common case)
 */
public record Rule(
        String id,
        @Nullable String name,
        List<String> replaces,
        Kind kind,
        @Nullable Limit limit,
        @Nullable Algorithm algorithm,
        long requestsPerUnit,
        @Nullable String unit,
        @Nullable Duration window,
        long capacity,
        boolean shadowMode,
        boolean quotaMode,
        boolean detailedMetric,
        @Nullable Map<String, Object> metadata,
        String source,
        @Nullable StreamDone streamDone) {

    /** This rule with {@code sd} as its {@link #streamDone()}. */
    public Rule withStreamDone(@Nullable StreamDone sd) {
        return new Rule(
                id,
                name,
                replaces,
                kind,
                limit,
                algorithm,
                requestsPerUnit,
                unit,
                window,
                capacity,
                shadowMode,
                quotaMode,
                detailedMetric,
                metadata,
                source,
                sd);
    }

    public enum Kind {
        LIMITED,
        UNLIMITED,
        BLOCKED
    }

    /** The limit of a {@link Kind#LIMITED} rule. */
    public Limit limitOfLimited() {
        return Objects.requireNonNull(limit, "only a LIMITED rule has a limit");
    }

    /** The window of a {@link Kind#LIMITED} or {@link Kind#BLOCKED} rule, in nanoseconds. */
    public long windowNanos() {
        return Objects.requireNonNull(window, "an UNLIMITED rule has no window").toNanos();
    }

    /** The label used in {@code RateLimit-Policy} and {@code RateLimit} headers: the name, else the id. */
    public String policyName() {
        return name != null ? name : id;
    }
}
