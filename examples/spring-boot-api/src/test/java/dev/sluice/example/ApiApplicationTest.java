package dev.sluice.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The example as shipped, over real HTTP: its YAML starts, free and pro users get their tiers' limits, exports are
 * limited by the page with {@code @RateLimited}, and {@code /actuator/ratelimits} shows it all. The
 * limiter's clock is frozen (a {@link ManualTicker} bean, which the starter picks up) so that no window ends mid-test.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(ApiApplicationTest.FrozenClock.class)
class ApiApplicationTest {
    @TestConfiguration
    static class FrozenClock {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
        }
    }

    private final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    @Autowired
    ManualTicker ticker;

    private HttpResponse<String> greeting(String token) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/greeting"))
                        .header("Authorization", "Bearer " + token)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void freeUserGetsFiveAMinuteAndThenA429() throws Exception {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> ok = greeting("alice-token");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("{\"greeting\":\"hello alice\"}");
        }
        HttpResponse<String> denied = greeting("alice-token");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"per-ip\";q=20;w=60, \"free-user\";q=5;w=60");
        // bob is pro (50 a minute); the per-ip budget of 20 has 15 left after alice's five
        HttpResponse<String> bob = greeting("bob-token");
        assertThat(bob.statusCode()).isEqualTo(200);
        assertThat(bob.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"per-ip\";r=14;");
    }

    private HttpResponse<String> export(String token, int pages) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/exports?pages=" + pages))
                        .header("Authorization", "Bearer " + token)
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void exportsCostOnePermitAPageTenAnHour() throws Exception {
        HttpResponse<String> four = export("bob-token", 4);
        assertThat(four.statusCode()).isEqualTo(200);
        assertThat(four.body()).isEqualTo("{\"user\":\"bob\",\"pages\":4}");
        assertThat(export("bob-token", 6).statusCode()).isEqualTo(200);
        HttpResponse<String> denied = export("bob-token", 1);
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"exports\";q=10;w=3600");
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("360");
        ticker.advance(Duration.ofMinutes(1)); // a fresh per-ip window for the other test, whichever runs next
    }

    @Test
    void actuatorListsWhatIsEnforced() throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/ratelimits"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body())
                .contains("\"store\":{\"kind\":\"memory\",\"healthy\":true}")
                .contains("\"name\":\"per-user\"")
                .contains("\"method\":\"dev.sluice.example.ExportService.export(String, int)\",\"limit\":\"exports\","
                        + "\"key\":\"#user\",\"cost\":\"#pages\"");
    }
}
