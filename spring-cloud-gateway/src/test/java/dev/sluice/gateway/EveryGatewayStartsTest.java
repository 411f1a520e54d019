package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.spring.IsolatedApp;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A real gateway (the test app's routes, in memory) with and without Actuator and Micrometer on its class path, over
 * real HTTP: each starts and answers 429 over a route's limit; with Actuator, {@code /actuator/ratelimits} lists
 * every route limited by Sluice with its limit and counts, and {@code sluice.requests} counts its decisions, tagged
 * with the route's id as the servlet filter's are with its rules. Each gateway runs in an {@link IsolatedApp}: without
 * Actuator, Micrometer's meters are not on its class path at all; and no gateway has the servlet API.
 */
class EveryGatewayStartsTest {
    private static final Backend BACKEND = Backend.start();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String APP = "dev.sluice.gateway.testapp.GatewayTestApp";

    @AfterAll
    static void stopBackend() {
        BACKEND.close();
    }

    private static IsolatedApp start(List<String> excluded, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--backend.uri=" + BACKEND.uri()));
        all.addAll(List.of(args));
        return IsolatedApp.start(APP, excluded, all.toArray(String[]::new));
    }

    private static JsonNode json(int port, String path) throws IOException {
        HttpResponse<String> r = Http.get(port, path);
        assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** sluice-words: a token bucket of 3 refilled at 3 a day; the fourth request is answered 429. */
    private static void theFourthIsDenied(IsolatedApp app, String user) {
        for (int i = 0; i < 3; i++) {
            assertThat(Http.as(user, app.port(), "/sluice/a").statusCode()).isEqualTo(200);
        }
        HttpResponse<String> denied = Http.as(user, app.port(), "/sluice/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(Http.header(denied, "RateLimit-Policy")).isEqualTo("\"sluice-words\";q=3;w=86400");
    }

    private static JsonNode route(JsonNode endpoint, String id) {
        for (JsonNode r : endpoint.get("routes")) {
            if (r.get("id").asText().equals(id)) {
                return r;
            }
        }
        throw new AssertionError("no route " + id + " in " + endpoint);
    }

    @Test
    void withActuatorAndMicrometerTheEndpointListsTheRoutesAndTheMetricCountsTheirDecisions() throws Exception {
        try (IsolatedApp app = start(List.of(), "--management.endpoints.web.exposure.include=ratelimits,metrics")) {
            assertThat(app.canLoad("io.micrometer.core.instrument.MeterRegistry"))
                    .isTrue();
            assertThat(app.canLoad("jakarta.servlet.Filter"))
                    .as("a gateway has no servlet API")
                    .isFalse();
            theFourthIsDenied(app, "alice");
            assertThat(Http.as("bob", app.port(), "/closed/a").statusCode()).isEqualTo(429);

            JsonNode endpoint = json(app.port(), "/actuator/ratelimits");
            assertThat(endpoint.get("filter").asBoolean()).isFalse();
            List<String> ids = new ArrayList<>();
            endpoint.get("routes").forEach(r -> ids.add(r.get("id").asText()));
            assertThat(ids)
                    .containsExactlyInAnyOrder(
                            "scg-words", "scg-slow", "sluice-words", "sluice-window", "closed", "defaults");
            JsonNode words = route(endpoint, "sluice-words");
            assertThat(words.get("limit").toString())
                    .isEqualTo("{\"name\":\"sluice-words\",\"algorithm\":"
                            + "\"token_bucket\",\"capacity\":3,\"permits\":3,\"period\":\"PT24H\","
                            + "\"policy\":\"\\\"sluice-words\\\";q=3;w=86400\"}");
            assertThat(words.get("cost").asLong()).isEqualTo(1);
            assertThat(words.get("counts").get("allowed").asLong()).isEqualTo(3);
            assertThat(words.get("counts").get("denied").asLong()).isEqualTo(1);
            assertThat(route(endpoint, "closed").get("limit").isNull()).isTrue();
            assertThat(route(endpoint, "closed").get("counts").get("denied").asLong())
                    .isEqualTo(1);
            assertThat(route(endpoint, "scg-slow").get("cost").asLong()).isEqualTo(1200);

            assertThat(json(
                                    app.port(),
                                    "/actuator/metrics/sluice.requests?tag=rules:sluice-words"
                                            + "&tag=outcome:allowed&tag=degradation:none")
                            .get("measurements")
                            .get(0)
                            .get("value")
                            .asDouble())
                    .isEqualTo(3.0);
            assertThat(json(
                                    app.port(),
                                    "/actuator/metrics/sluice.requests?tag=rules:sluice-words" + "&tag=outcome:denied")
                            .get("measurements")
                            .get(0)
                            .get("value")
                            .asDouble())
                    .isEqualTo(1.0);
            assertThat(json(app.port(), "/actuator/metrics/sluice.requests?tag=rules:closed")
                            .get("measurements")
                            .get(0)
                            .get("value")
                            .asDouble())
                    .isEqualTo(1.0);
            assertThat(app.loadedNaming("dev.sluice.", "jakarta/servlet/")).isEmpty();
        }
    }

    @Test
    void withoutActuatorOrMicrometerItStartsAndLimits() throws Exception {
        try (IsolatedApp app = start(IsolatedApp.ACTUATOR_AND_MICROMETER)) {
            assertThat(app.canLoad("io.micrometer.core.instrument.MeterRegistry"))
                    .isFalse();
            theFourthIsDenied(app, "alice");
            assertThat(Http.get(app.port(), "/actuator/ratelimits").statusCode())
                    .isEqualTo(404);
            assertThat(app.loadedNaming("dev.sluice.", "jakarta/servlet/")).isEmpty();
        }
    }
}
