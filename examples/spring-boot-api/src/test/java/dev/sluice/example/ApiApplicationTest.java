package dev.sluice.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * The example as shipped, over real HTTP: its YAML starts, and free and pro users get their tiers' limits. The
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

    private HttpResponse<String> greeting(String token) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/greeting"))
                .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.ofString());
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
}
