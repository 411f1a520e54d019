package dev.sluice.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a {@link SluiceConfigException} into Spring Boot's "APPLICATION FAILED TO START" report: the fix is in a
 * property, or in a {@link RateLimited} annotation (or the limit it names).
 */
class SluiceConfigFailureAnalyzer extends AbstractFailureAnalyzer<SluiceConfigException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SluiceConfigException cause) {
        String action = cause.property().startsWith("@")
                ? "Fix " + cause.property() + ", or the limits under sluice.limits in your application.yml or"
                        + " application.properties."
                : "Fix the property " + cause.property() + " in your application.yml or application.properties.";
        return new FailureAnalysis("Sluice rate limiting is misconfigured: " + cause.getMessage(), action, cause);
    }
}
