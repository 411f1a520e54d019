package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import dev.sluice.Ticker;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.spring.testapp.TestApp;
import io.micrometer.core.instrument.MeterRegistry;
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
 * The starter with its default in-memory store, over real HTTP. One context for every test: each test uses its own
 * client addresses and users, so their buckets do not meet. Time is a {@link ManualTicker} the store picks up.
 */
@SpringBootTest(
        classes = TestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "sluice.trusted-proxies=127.0.0.1/32",
            "sluice.tiers=free,pro",
            "sluice.limits.free-user.requests_per_unit=2",
            "sluice.limits.free-user.unit=hour",
            "sluice.limits.free-user.algorithm=token_bucket",
            "sluice.limits.pro-user.requests-per-unit=5",
            "sluice.limits.pro-user.unit=hour",
            "sluice.limits.pro-user.algorithm=token_bucket",
            "sluice.rules[0].name=per-ip",
            "sluice.rules[0].paths=/api/**",
            "sluice.rules[0].requests_per_unit=3",
            "sluice.rules[0].unit=minute",
            "sluice.rules[1].name=per-user",
            "sluice.rules[1].paths=/api/**",
            "sluice.rules[1].key=user",
            "sluice.rules[1].tiers.free=free-user",
            "sluice.rules[1].tiers.pro=pro-user"
        })
@Import(MemoryStoreHttpTest.Clock.class)
class MemoryStoreHttpTest {
    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Autowired
    ManualTicker ticker;

    @Autowired
    MeterRegistry meters;

    @TestConfiguration
    static class Clock {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2026-01-01T00:00:10Z"));
        }
    }

    private int status(String path, String... headers) {
        return Http.get(port, path, headers).statusCode();
    }

    @Test
    void memoryStoreIsWiredWithTheApplicationsTicker() {
        assertThat(limiter).isInstanceOf(InMemoryRateLimiter.class);
        assertThat(ticker).isInstanceOf(Ticker.class);
    }

    @Test
    void perIpLimitAnswers429WithExactHeadersAndProblemBody() {
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> ok = Http.get(port, "/api/hello", "X-Forwarded-For", "198.51.100.10");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("hello");
            assertThat(ok.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=" + (2 - i) + ";t=50");
        }
        HttpResponse<String> denied = Http.get(port, "/api/items/7", "X-Forwarded-For", "198.51.100.10");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("50");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=3;w=60");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=50");
        assertThat(denied.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit 'per-ip' exceeded: retry in 50 s.\",\"instance\":\"/api/items/7\","
                        + "\"limit\":\"per-ip\",\"retryAfterSeconds\":50}");
        assertThat(status("/api/hello", "X-Forwarded-For", "198.51.100.11")).isEqualTo(200);
        assertThat(status("/health", "X-Forwarded-For", "198.51.100.10")).isEqualTo(200);
        assertThat(meters.counter(SluiceMetrics.REQUESTS, "rules", "per-ip", "outcome", "denied", "degradation", "none")
                        .count())
                .isGreaterThanOrEqualTo(1.0);
    }

    @Test
    void trustedProxysHeaderIsHonouredFromTheRightmostUntrustedHop() {
        for (int i = 0; i < 3; i++) {
            assertThat(status("/api/hello", "X-Forwarded-For", "203.0.113.1, 198.51.100.20"))
                    .isEqualTo(200);
        }
        // the spoofed left part changes nothing: still 198.51.100.20
        assertThat(status("/api/hello", "X-Forwarded-For", "203.0.113.2, 198.51.100.20"))
                .isEqualTo(429);
    }

    @Test
    void perUserLimitHoldsAcrossAddressesWithTheUsersTier() {
        assertThat(status("/api/hello", "X-Forwarded-For", "198.51.100.30", "X-Test-User", "alice"))
                .isEqualTo(200);
        assertThat(status("/api/hello", "X-Forwarded-For", "198.51.100.31", "X-Test-User", "alice"))
                .isEqualTo(200);
        HttpResponse<String> denied =
                Http.get(port, "/api/hello", "X-Forwarded-For", "198.51.100.32", "X-Test-User", "alice");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"per-ip\";q=3;w=60, \"free-user\";q=2;w=3600");
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("1800");
        // the denial took nothing from 198.51.100.32's per-ip budget: three fit
        for (int i = 0; i < 3; i++) {
            assertThat(status("/api/hello", "X-Forwarded-For", "198.51.100.32")).isEqualTo(200);
        }
        for (int i = 0; i < 5; i++) {
            assertThat(status(
                            "/api/hello",
                            "X-Forwarded-For",
                            "198.51.100.4" + i,
                            "X-Test-User",
                            "paying",
                            "X-Test-Tier",
                            "pro"))
                    .isEqualTo(200);
        }
        assertThat(status(
                        "/api/hello",
                        "X-Forwarded-For",
                        "198.51.100.49",
                        "X-Test-User",
                        "paying",
                        "X-Test-Tier",
                        "pro"))
                .isEqualTo(429);
    }

    @Test
    void bucketsRefillWithTheTicker() {
        for (int i = 0; i < 3; i++) {
            assertThat(status("/api/hello", "X-Forwarded-For", "198.51.100.50")).isEqualTo(200);
        }
        assertThat(status("/api/hello", "X-Forwarded-For", "198.51.100.50")).isEqualTo(429);
        ticker.advance(Duration.ofMinutes(1));
        assertThat(status("/api/hello", "X-Forwarded-For", "198.51.100.50")).isEqualTo(200);
    }
}
