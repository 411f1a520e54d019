package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The starter in a Spring MVC application and in a WebFlux one on Netty, each with and without Actuator and
 * Micrometer on its class path, over real HTTP: each starts, answers 429 over its limit, and, with Actuator, shows
 * its counts in {@code /actuator/ratelimits} and {@code sluice.*} meters in {@code /actuator/metrics}. Each runs in
 * an {@link IsolatedApp}, whose class path truly lacks what the case lacks: the WebFlux application has no servlet
 * API at all, as on Netty, and "without Micrometer" has no Micrometer meters at all.
 */
class EveryWebStackStartsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SERVLET_APP = "dev.sluice.spring.servletapp.ServletApp";
    private static final String FLUX_APP = "dev.sluice.spring.fluxapp.FluxApp";
    private static final String[] RULE = {
        "--sluice.rules[0].name=per-ip",
        "--sluice.rules[0].paths=/api/**",
        "--sluice.rules[0].requests_per_unit=2",
        "--sluice.rules[0].unit=minute"
    };
    private static final String[] LIMIT = {
        "--sluice.limits.reports.requests_per_unit=2", "--sluice.limits.reports.unit=minute"
    };
    private static final String EXPOSED = "--management.endpoints.web.exposure.include=ratelimits,metrics";
    /** Spring Cloud (spring-cloud-context and whatever else of it): optional, its refresh rebuilds the rules. */
    private static final List<String> SPRING_CLOUD = List.of("spring-cloud-");

    private static List<String> both(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static String[] args(String[] a, String... more) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    private static JsonNode json(int port, String path) throws IOException {
        HttpResponse<String> r = Http.get(port, path);
        assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** The count of a meter with these tags, through Actuator's metrics endpoint. */
    private static double meter(int port, String name, String... tags) throws IOException {
        StringBuilder path = new StringBuilder("/actuator/metrics/").append(name);
        for (int i = 0; i < tags.length; i++) {
            path.append(i == 0 ? '?' : '&').append("tag=").append(tags[i]);
        }
        return json(port, path.toString())
                .get("measurements")
                .get(0)
                .get("value")
                .asDouble();
    }

    /** Two requests pass, the third is answered 429 by the filter's rule. */
    private static void filterDeniesTheThird(IsolatedApp app) {
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> ok = Http.get(app.port(), "/api/hello");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=" + (1 - i) + ";t=60");
        }
        HttpResponse<String> denied = Http.get(app.port(), "/api/hello");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
    }

    /** Two calls of a @RateLimited Mono pass, the third is answered 429 by the WebFlux handler. */
    private static void methodDeniesTheThird(IsolatedApp app) {
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> ok = Http.get(app.port(), "/api/reports/ann");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("report for ann");
        }
        HttpResponse<String> denied = Http.get(app.port(), "/api/reports/ann");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"reports\";q=2;w=60");
    }

    @Test
    void aServletAppWithActuatorAndMicrometer() throws Exception {
        try (IsolatedApp app = IsolatedApp.start(SERVLET_APP, List.of(), args(RULE, EXPOSED))) {
            assertThat(app.canLoad("io.micrometer.core.instrument.MeterRegistry"))
                    .isTrue();
            filterDeniesTheThird(app);
            assertThat(app.loadedNaming("dev.sluice.", "jakarta/servlet/"))
                    .as("the check sees the filter")
                    .contains("dev.sluice.servlet.RateLimitFilter", "dev.sluice.servlet.RateLimitListener");
            assertThat(app.loaded("dev.sluice.spring."))
                    .as("with Spring Cloud, its refresh rebuilds the rules")
                    .contains("dev.sluice.spring.EnvironmentChangeListener");

            JsonNode rule =
                    json(app.port(), "/actuator/ratelimits").get("rules").get(0);
            assertThat(rule.get("name").asText()).isEqualTo("per-ip");
            assertThat(rule.get("counts").get("allowed").asLong()).isEqualTo(2);
            assertThat(rule.get("counts").get("denied").asLong()).isEqualTo(1);
            assertThat(meter(app.port(), "sluice.requests", "rules:per-ip", "outcome:allowed", "degradation:none"))
                    .isEqualTo(2.0);
            assertThat(meter(app.port(), "sluice.requests", "rules:per-ip", "outcome:denied"))
                    .isEqualTo(1.0);
        }
    }

    @Test
    void aServletAppWithoutActuatorMicrometerOrSpringCloud() throws Exception {
        assertThat(IsolatedApp.loadableWithout(
                        IsolatedApp.ACTUATOR_AND_MICROMETER, "io.micrometer.core.instrument.MeterRegistry"))
                .as("truly absent")
                .isFalse();
        List<String> excluded = both(IsolatedApp.ACTUATOR_AND_MICROMETER, SPRING_CLOUD);
        try (IsolatedApp app = IsolatedApp.start(SERVLET_APP, excluded, RULE)) {
            assertThat(app.canLoad("org.springframework.cloud.context.environment.EnvironmentChangeEvent"))
                    .isFalse();
            filterDeniesTheThird(app);
            assertThat(Http.get(app.port(), "/actuator/ratelimits").statusCode())
                    .isEqualTo(404);
            assertThat(app.loaded("dev.sluice.spring.")).doesNotContain("dev.sluice.spring.EnvironmentChangeListener");
        }
    }

    @Test
    void aWebFluxAppWithActuatorAndMicrometer() throws Exception {
        try (IsolatedApp app = IsolatedApp.start(FLUX_APP, IsolatedApp.SERVLET, args(LIMIT, EXPOSED))) {
            assertThat(app.canLoad("jakarta.servlet.Filter"))
                    .as("no servlet API: WebFlux on Netty")
                    .isFalse();
            assertThat(app.canLoad("io.micrometer.core.instrument.MeterRegistry"))
                    .isTrue();
            methodDeniesTheThird(app);

            JsonNode endpoint = json(app.port(), "/actuator/ratelimits");
            assertThat(endpoint.get("filter").asBoolean()).isFalse();
            JsonNode report = null;
            for (JsonNode m : endpoint.get("methods")) {
                if (m.get("method").asText().endsWith("Reports.report(String)")) {
                    report = m;
                }
            }
            assertThat(report).as("the @RateLimited Mono in %s", endpoint).isNotNull();
            assertThat(report.get("counts").get("allowed").asLong()).isEqualTo(2);
            assertThat(report.get("counts").get("denied").asLong()).isEqualTo(1);
            assertThat(meter(
                            app.port(),
                            "sluice.calls",
                            "limit:reports",
                            "method:Reports.report",
                            "outcome:allowed",
                            "degradation:none"))
                    .isEqualTo(2.0);
            assertThat(meter(app.port(), "sluice.calls", "limit:reports", "outcome:denied"))
                    .isEqualTo(1.0);
            assertThat(app.loaded("dev.sluice.spring."))
                    .as("Sluice's Spring classes loaded")
                    .contains("dev.sluice.spring.SluiceAutoConfiguration", "dev.sluice.spring.RateLimitsEndpoint");
            assertThat(app.loadedNaming("dev.sluice.", "jakarta/servlet/"))
                    .as("loaded and naming the servlet API")
                    .isEmpty();
        }
    }

    @Test
    void aWebFluxAppWithoutActuatorOrMicrometer() throws Exception {
        List<String> excluded = both(IsolatedApp.SERVLET, IsolatedApp.ACTUATOR_AND_MICROMETER);
        try (IsolatedApp app = IsolatedApp.start(FLUX_APP, excluded, LIMIT)) {
            assertThat(app.canLoad("jakarta.servlet.Filter")).isFalse();
            assertThat(app.canLoad("io.micrometer.core.instrument.MeterRegistry"))
                    .isFalse();
            methodDeniesTheThird(app);
            assertThat(app.loadedNaming("dev.sluice.", "jakarta/servlet/")).isEmpty();
        }
    }
}
