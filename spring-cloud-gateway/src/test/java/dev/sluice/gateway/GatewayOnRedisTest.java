package dev.sluice.gateway;

import static dev.sluice.gateway.Http.as;
import static dev.sluice.gateway.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.gateway.testapp.GatewayTestApp;
import dev.sluice.redis.RedisServer;
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
 * The same gateway on a real redis-server ({@code sluice.store: redis://…}, behind {@code fail_closed}), over HTTP.
 * Time is Redis's own, so the routes tested here refill too slowly for a slow machine to change an outcome: the
 * {@code scg-slow} route gives back a request's worth of tokens in 20 minutes, {@code sluice-words} in 8 hours.
 * Last, the server is killed and the failure policy answers, saying so.
 */
@SpringBootTest(
        classes = GatewayTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "sluice.failure-policy=fail_closed")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@DirtiesContext // its Redis is gone after the last test
class GatewayOnRedisTest {
    private static final Backend BACKEND = Backend.start();
    private static final RedisServer REDIS = RedisServer.start();

    @LocalServerPort
    int port;

    @Autowired
    SluiceRateLimiter limiter;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("backend.uri", BACKEND::uri);
        registry.add("sluice.store", REDIS::uri);
    }

    @AfterAll
    static void stop() {
        REDIS.close();
        BACKEND.close();
    }

    private FailSafeRateLimiter store() {
        return (FailSafeRateLimiter) limiter.getStore();
    }

    @Test
    @Order(1)
    void theStoreIsRedisBehindTheFailurePolicy() {
        assertThat(limiter.getStore()).isInstanceOf(FailSafeRateLimiter.class);
        assertThat(store().policy()).isEqualTo(FailurePolicy.FAIL_CLOSED);
        assertThat(store().storeHealthy())
                .as("the context waited for the store to open")
                .isTrue();
    }

    @Test
    @Order(2)
    void burstCapacityPassAndTheNextIsDeniedBeforeTheBackend() {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = as("alice", port, "/slow/a");
            assertThat(r.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(r.body()).isEqualTo("backend saw /slow/a");
            // tokens left: 3600 - 1200·i, plus the 1 a second Redis's clock has added since: whole requests left
            // are exact
            long remaining = Long.parseLong(header(r, "X-RateLimit-Remaining"));
            assertThat(remaining / 1200).isEqualTo(3 - i);
            assertThat(header(r, "X-RateLimit-Replenish-Rate")).isEqualTo("1");
            assertThat(header(r, "X-RateLimit-Burst-Capacity")).isEqualTo("3600");
            assertThat(header(r, "X-RateLimit-Requested-Tokens")).isEqualTo("1200");
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"scg-slow\";q=3600;w=3600");
            assertThat(header(r, "RateLimit")).isEqualTo("\"scg-slow\";r=" + remaining + ";t=" + (3600 - remaining));
        }
        HttpResponse<String> denied = as("alice", port, "/slow/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(header(denied, "X-RateLimit-Remaining"))).isLessThan(1200);
        long retryAfter = Long.parseLong(header(denied, "Retry-After"));
        assertThat(retryAfter).as("the missing tokens at 1 a second").isBetween(1L, 1200L);
        assertThat(retryAfter + Long.parseLong(header(denied, "X-RateLimit-Remaining")))
                .isEqualTo(1200);
        assertThat(BACKEND.hits("/slow/a"))
                .as("a denied request never reaches the backend")
                .isEqualTo(3);
    }

    @Test
    @Order(3)
    void eachKeyHasItsOwnBucket() {
        for (int i = 0; i < 3; i++) {
            assertThat(as("bob", port, "/slow/keys").statusCode()).isEqualTo(200);
        }
        assertThat(as("bob", port, "/slow/keys").statusCode()).isEqualTo(429);
        HttpResponse<String> other = as("carol", port, "/slow/keys");
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(Long.parseLong(header(other, "X-RateLimit-Remaining")) / 1200)
                .isEqualTo(2);
        assertThat(BACKEND.hits("/slow/keys")).isEqualTo(4);
    }

    @Test
    @Order(4)
    void sluiceWordsOnRedis() {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = as("dave", port, "/sluice/a");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(header(r, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"sluice-words\";q=3;w=86400");
        }
        HttpResponse<String> denied = as("dave", port, "/sluice/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(header(denied, "X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(Long.parseLong(header(denied, "Retry-After")))
                .as("one token of 3 a day: 8 h, less the time" + " since the first request")
                .isBetween(28_800L - 600, 28_800L);
        assertThat(BACKEND.hits("/sluice/a")).isEqualTo(3);
    }

    @Test
    @Order(5)
    void everyDecisionSoFarWasRedissOwn() {
        for (Degradation cause : Degradation.values()) {
            assertThat(store().degradedCount(cause))
                    .as("a healthy Redis with default settings: %s", cause)
                    .isZero();
        }
    }

    @Test
    @Order(6)
    void redisDownFailsClosed() {
        REDIS.stop();
        HttpResponse<String> r = as("erin", port, "/slow/down");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(header(r, "Retry-After"))
                .as("the probe interval, 200 ms, rounded up")
                .isEqualTo("1");
        assertThat(BACKEND.hits("/slow/down")).isZero();
        long degraded = 0;
        String counted = null;
        for (Degradation cause : Degradation.values()) {
            long n = cause == Degradation.NONE ? 0 : store().degradedCount(cause);
            degraded += n;
            counted = n > 0 ? cause.label() : counted;
        }
        assertThat(degraded).isEqualTo(1);
        // the policy's answer claims nothing it does not know: remaining unknown, as RedisRateLimiter says it
        assertThat(header(r, "X-RateLimit-Remaining")).isEqualTo("-1");
        assertThat(header(r, "Sluice-Degraded")).isEqualTo(counted);
        assertThat(header(r, "RateLimit")).isNull();
        assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"scg-slow\";q=3600;w=3600");
    }
}
