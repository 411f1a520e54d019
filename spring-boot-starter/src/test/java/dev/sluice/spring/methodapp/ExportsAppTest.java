package dev.sluice.spring.methodapp;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * {@link ExportsApp} on a random port with its limits, a generous per-IP rule and the {@code ratelimits} endpoint
 * exposed: one configuration, so that the test classes using it share one context.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@SpringBootTest(
        classes = ExportsApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "sluice.limits.exports.requests_per_unit=5",
            "sluice.limits.exports.unit=hour",
            "sluice.limits.exports.algorithm=token_bucket",
            "sluice.limits.reports.requests_per_unit=1",
            "sluice.limits.reports.unit=minute",
            "sluice.limits.reports.algorithm=token_bucket",
            "sluice.rules[0].name=per-ip",
            "sluice.rules[0].paths=/api/**",
            "sluice.rules[0].requests_per_unit=1000",
            "sluice.rules[0].unit=minute",
            "management.endpoints.web.exposure.include=ratelimits"
        })
public @interface ExportsAppTest {}
