package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.spring.methodapp.ExportsAppTest;
import java.io.IOException;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * {@code GET /actuator/ratelimits} over real HTTP, exposed by the test application's properties: the rules with their
 * numbers, the named limits, the annotated methods, the store, and counts that move with the traffic. The context
 * is shared with {@link RateLimitedHttpTest}, so counts are compared before and after this test's own calls.
 */
@ExportsAppTest
class RateLimitsEndpointHttpTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @LocalServerPort
    int port;

    private JsonNode rateLimits() throws IOException {
        HttpResponse<String> r = Http.get(port, "/actuator/ratelimits");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElseThrow())
                .startsWith("application/vnd.spring-boot" + ".actuator.v3+json");
        return JSON.readTree(r.body());
    }

    private static JsonNode method(JsonNode endpoint, String name) {
        for (JsonNode m : endpoint.get("methods")) {
            if (m.get("method").asText().equals(name)) {
                return m;
            }
        }
        throw new AssertionError("no method " + name + " in " + endpoint.get("methods"));
    }

    private static final String EXPORT = "dev.sluice.spring.methodapp.ExportsApp$ExportService.export(User, List)";

    @Test
    void listsRulesLimitsMethodsAndTheStore() throws IOException {
        JsonNode e = rateLimits();
        assertThat(e.get("enabled").asBoolean()).isTrue();
        assertThat(e.get("shadowMode").asBoolean()).isFalse();
        assertThat(e.get("store").toString()).isEqualTo("{\"kind\":\"memory\",\"healthy\":true}");
        assertThat(e.get("limits").get("exports").toString())
                .isEqualTo("{\"name\":\"exports\","
                        + "\"algorithm\":\"token_bucket\",\"capacity\":5,\"permits\":5,\"period\":\"PT1H\","
                        + "\"policy\":\"\\\"exports\\\";q=5;w=3600\"}");
        assertThat(e.get("limits").get("reports").get("period").asText()).isEqualTo("PT1M");
        assertThat(e.get("filter").asBoolean()).isTrue();

        JsonNode rule = e.get("rules").get(0);
        assertThat(rule.get("name").asText()).isEqualTo("per-ip");
        assertThat(rule.get("paths").toString()).isEqualTo("[\"/api/**\"]");
        assertThat(rule.get("methods").toString()).isEqualTo("[]");
        assertThat(rule.get("key").asText()).isEqualTo("ip");
        assertThat(rule.get("cost").asLong()).isEqualTo(1);
        assertThat(rule.get("limit").toString())
                .isEqualTo(
                        "{\"name\":\"per-ip\",\"algorithm\":\"fixed_window\","
                                + "\"capacity\":1000,\"permits\":1000,\"period\":\"PT1M\",\"policy\":\"\\\"per-ip\\\";q=1000;w=60\"}");

        JsonNode export = method(e, EXPORT);
        assertThat(export.get("limit").asText()).isEqualTo("exports");
        assertThat(export.get("key").asText()).isEqualTo("#user.id");
        assertThat(export.get("cost").asText()).isEqualTo("#items.size()");
        assertThat(export.get("scope").asText()).isEqualTo("ExportService.export");
        assertThat(export.get("returns").asText()).isEqualTo("value");
        JsonNode mono = method(e, "dev.sluice.spring.methodapp.ExportsApp$ExportService.reportMono(String)");
        assertThat(mono.get("scope").asText()).isEqualTo("report-mono");
        assertThat(mono.get("cost").asText()).isEqualTo("1");
        assertThat(mono.get("returns").asText()).isEqualTo("mono");
        assertThat(method(e, "dev.sluice.spring.methodapp.ExportsApp$ExportService.report(String)")
                        .get("returns")
                        .asText())
                .isEqualTo("completion_stage");
    }

    @Test
    void countsFollowTheTraffic() throws IOException {
        JsonNode before = rateLimits();
        for (int i = 0; i < 6; i++) { // five allowed, one denied by @RateLimited: six requests the rule allowed
            Http.get(port, "/api/exports?user=zoe&items=1");
        }
        JsonNode after = rateLimits();
        JsonNode methodBefore = method(before, EXPORT).get("counts");
        JsonNode methodAfter = method(after, EXPORT).get("counts");
        assertThat(methodAfter.get("allowed").asLong()
                        - methodBefore.get("allowed").asLong())
                .isEqualTo(5);
        assertThat(methodAfter.get("denied").asLong()
                        - methodBefore.get("denied").asLong())
                .isEqualTo(1);
        assertThat(methodAfter.get("shadow_denied").asLong()).isZero();
        JsonNode ruleBefore = before.get("rules").get(0).get("counts");
        JsonNode ruleAfter = after.get("rules").get(0).get("counts");
        assertThat(ruleAfter.get("allowed").asLong() - ruleBefore.get("allowed").asLong())
                .isEqualTo(6);
        assertThat(ruleAfter.get("denied").asLong()).isZero();
    }
}
