package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.http.RateLimitFields;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A call over its limit: thrown by a {@link RateLimited} method instead of running it (or the failure of the
 * future or publisher it returns). Spring MVC and WebFlux applications answer it {@code 429} with
 * {@code RateLimit}, {@code RateLimit-Policy} and {@code Retry-After} headers and a problem+json body; elsewhere,
 * catch it and use {@link #retryAfter()}.
 *
 * <p>It carries no stack trace: denials are expected, may come by the thousand under a flood, and where one was
 * thrown is always the annotated method, named in the message.
 */
public class RateLimitExceededException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String limitName;
    private final String key;
    private final transient Limit limit;
    private final transient Decision decision;

    /**
     * @param limitName the limit's name, as in {@code sluice.limits} and the {@code RateLimit} headers
     * @param limit the limit that denied (its quota and window go into {@code RateLimit-Policy})
     * @param key the caller's key, as the annotation's {@code key} gave it (not the store key)
     * @param decision the denied decision
     */
    public RateLimitExceededException(String limitName, Limit limit, String key, Decision decision) {
        this(limitName, limit, key, decision, null);
    }

    RateLimitExceededException(String limitName, Limit limit, String key, Decision decision, @Nullable String method) {
        super(message(limitName, decision, method), null, false, false);
        this.limitName = Objects.requireNonNull(limitName, "limitName");
        this.limit = Objects.requireNonNull(limit, "limit");
        this.key = key;
        this.decision = Objects.requireNonNull(decision, "decision");
    }

    private static String message(String limitName, Decision d, @Nullable String method) {
        String by = method == null ? "" : " by " + method;
        long retry = RateLimitFields.retryAfterSeconds(d);
        return d.degraded()
                ? "Rate limit '" + limitName + "' could not be checked ("
                        + d.degradation().label() + ") and the failure policy denies" + by + ": retry in " + retry
                        + " s."
                : "Rate limit '" + limitName + "' exceeded" + by + ": retry in " + retry + " s.";
    }

    /** The limit's name, as in {@code sluice.limits}. */
    public String limitName() {
        return limitName;
    }

    /** The caller's key as the annotation's {@code key} expression gave it; {@code *} when it has none. */
    public String key() {
        return key;
    }

    /** How long until the same call would be allowed (exact; {@code Retry-After} rounds it up to seconds). */
    public Duration retryAfter() {
        return decision.retryAfter();
    }

    /** The denied decision: remaining permits, retry and reset times, and whether a failure policy made it. */
    public Decision decision() {
        return decision;
    }

    /** The limit that denied. */
    public Limit limit() {
        return limit;
    }
}
