package dev.sluice.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a {@link SluiceConfigException} into Spring Boot's "APPLICATION FAILED TO START" report. */
class SluiceConfigFailureAnalyzer extends AbstractFailureAnalyzer<SluiceConfigException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SluiceConfigException cause) {
        return new FailureAnalysis("Sluice rate limiting is misconfigured: " + cause.getMessage(),
                "Fix the property " + cause.property() + " in your application.yml or application.properties.",
                cause);
    }
}
