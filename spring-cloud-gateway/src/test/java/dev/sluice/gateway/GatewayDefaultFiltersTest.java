package dev.sluice.gateway;

import static dev.sluice.gateway.Http.as;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.gateway.testapp.GatewayTestApp;
import java.net.http.HttpResponse;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * RequestRateLimiter in {@code default-filters}, configured there with {@code sluice-rate-limiter.*} as
 * RedisRateLimiter users configure {@code redis-rate-limiter.*}, and the headers switched off with
 * {@code sluice-rate-limiter.include-headers: false}: a route with no filter of its own is limited, silently.
 */
@SpringBootTest(
        classes = GatewayTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.cloud.gateway.server.webflux.default-filters[0].name=RequestRateLimiter",
            "spring.cloud.gateway.server.webflux.default-filters[0].args[sluice-rate-limiter.replenishRate]=1",
            "spring.cloud.gateway.server.webflux.default-filters[0].args[sluice-rate-limiter.burstCapacity]=3600",
            "spring.cloud.gateway.server.webflux.default-filters[0].args[sluice-rate-limiter.requestedTokens]=1800",
            "spring.cloud.gateway.server.webflux.sluice-rate-limiter.include-headers=false"
        })
class GatewayDefaultFiltersTest {
    private static final Backend BACKEND = Backend.start();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add("backend.uri", BACKEND::uri);
    }

    @AfterAll
    static void stopBackend() {
        BACKEND.close();
    }

    @Test
    void defaultFiltersLimitARouteWithoutFiltersAndIncludeHeadersFalseHidesTheNumbers() {
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> r = as("alice", port, "/plain/a");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().map().keySet())
                    .noneMatch(h -> h.toLowerCase(Locale.ROOT).contains("ratelimit"));
        }
        HttpResponse<String> denied = as("alice", port, "/plain/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().map().keySet())
                .noneMatch(h -> h.toLowerCase(Locale.ROOT).contains("ratelimit") || h.equalsIgnoreCase("retry-after"));
        assertThat(as("bob", port, "/plain/a").statusCode()).isEqualTo(200);
        assertThat(BACKEND.hits("/plain/a")).isEqualTo(3);
    }
}
