package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import dev.sluice.RateLimiter;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.redis.RedisServer;
import dev.sluice.spring.testapp.TestApp;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter on a real redis-server, in shadow mode, over real HTTP: the store decides (would-be denials are
 * counted, nothing is denied), then the server is killed and the failure policy (fail open) answers at once.
 */
@SpringBootTest(
        classes = TestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "sluice.shadow-mode=true",
            "sluice.failure-policy=fail_open",
            "sluice.probe-interval=100ms",
            "sluice.rules[0].name=redis-per-ip",
            "sluice.rules[0].paths=/api/**",
            "sluice.rules[0].requests_per_unit=2",
            "sluice.rules[0].unit=hour",
            "sluice.rules[0].algorithm=gcra"
        })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext // its Redis is gone after the last test
class RedisStoreHttpTest {
    private static final RedisServer REDIS = RedisServer.start();

    @LocalServerPort
    int port;

    @Autowired
    RateLimiter limiter;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry registry) {
        registry.add("sluice.store", REDIS::uri);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    private double count(String outcome, String degradation) {
        return meters.counter(
                        SluiceMetrics.REQUESTS, "rules", "redis-per-ip", "outcome", outcome, "degradation", degradation)
                .count();
    }

    @Test
    @Order(1)
    void redisDecidesAndShadowModeOnlyCountsWouldBeDenials() throws InterruptedException {
        assertThat(limiter).isInstanceOf(FailSafeRateLimiter.class);
        FailSafeRateLimiter failSafe = (FailSafeRateLimiter) limiter;
        assertThat(failSafe.storeHealthy())
                .as("the context waited for a healthy store to open")
                .isTrue();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = Http.get(port, "/api/hello");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("RateLimit")).isEmpty();
        }
        assertThat(count("allowed", "none")).isEqualTo(2.0);
        assertThat(count("shadow_denied", "none")).isEqualTo(3.0);
        for (Degradation cause : Degradation.values()) {
            assertThat(failSafe.degradedCount(cause))
                    .as("a healthy Redis with default settings: %s", cause)
                    .isZero();
        }
    }

    @Test
    @Order(2)
    void redisDownFailsOpen() {
        REDIS.stop();
        for (int i = 0; i < 5; i++) { // each within Http's 10 s timeout, the hang guard
            assertThat(Http.get(port, "/api/hello").statusCode()).isEqualTo(200);
        }
        FailSafeRateLimiter failSafe = (FailSafeRateLimiter) limiter;
        long degraded = 0;
        for (Degradation cause : Degradation.values()) {
            degraded += cause == Degradation.NONE ? 0 : failSafe.degradedCount(cause);
        }
        assertThat(degraded).isEqualTo(5);
        assertThat(meters.find(SluiceMetrics.REQUESTS).tag("outcome", "allowed").counters().stream()
                        .filter(c -> !"none".equals(c.getId().getTag("degradation")))
                        .mapToDouble(c -> c.count())
                        .sum())
                .isEqualTo(5.0);
    }
}
