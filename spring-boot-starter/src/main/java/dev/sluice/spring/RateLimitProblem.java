package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.http.JsonText;
import dev.sluice.http.RateLimitFields;
import java.nio.charset.StandardCharsets;

/**
 * The {@code 429} answer to a {@link RateLimitExceededException}, the same as the filter's: {@code RateLimit-Policy}
 * and {@code RateLimit} (IETF httpapi draft), {@code Retry-After} in whole seconds rounded up, and an RFC 9457
 * problem+json body. Shared by the Spring MVC and WebFlux handlers, so both answer byte for byte alike.
 */
record RateLimitProblem(String policy, String state, long retryAfterSeconds, String json) {
    static final String CONTENT_TYPE = "application/problem+json";
    static final int STATUS = 429;

    /** The problem+json body, UTF-8. */
    byte[] body() {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    static RateLimitProblem of(RateLimitExceededException e, String problemType, String instance) {
        Decision d = e.decision();
        String name = e.limitName();
        long retry = RateLimitFields.retryAfterSeconds(d);
        String detail = d.degraded()
                ? "Rate limit '" + name + "' could not be checked ("
                        + d.degradation().label() + ") and the failure policy denies: retry in " + retry + " s."
                : "Rate limit '" + name + "' exceeded: retry in " + retry + " s.";
        StringBuilder json = new StringBuilder(256).append("{\"type\":");
        JsonText.string(json, problemType)
                .append(",\"title\":\"Too Many Requests\",\"status\":")
                .append(STATUS)
                .append(",\"detail\":");
        JsonText.string(json, detail).append(",\"instance\":");
        JsonText.string(json, instance).append(",\"limit\":");
        JsonText.string(json, name).append(",\"retryAfterSeconds\":").append(retry);
        if (d.degraded()) {
            json.append(",\"degradation\":");
            JsonText.string(json, d.degradation().label());
        }
        json.append('}');
        return new RateLimitProblem(
                RateLimitFields.appendPolicy(new StringBuilder(), name, e.limit())
                        .toString(),
                RateLimitFields.appendState(new StringBuilder(), name, d).toString(),
                retry,
                json.toString());
    }
}
