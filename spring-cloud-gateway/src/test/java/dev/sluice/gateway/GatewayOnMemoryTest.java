package dev.sluice.gateway;

import static dev.sluice.gateway.Http.as;
import static dev.sluice.gateway.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import dev.sluice.Ticker;
import dev.sluice.gateway.testapp.GatewayTestApp;
import dev.sluice.memory.InMemoryRateLimiter;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A real gateway (Spring Cloud Gateway on Netty, random port) in front of a real backend, over HTTP, deciding in
 * memory on a frozen clock: the numbers are exact and no test depends on how fast the machine is. Each test uses
 * its own user, so each starts with full buckets.
 */
@SpringBootTest(
        classes = {GatewayTestApp.class, GatewayOnMemoryTest.FrozenClock.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GatewayOnMemoryTest {
    private static final Backend BACKEND = Backend.start();

    @LocalServerPort
    int port;

    @Autowired
    SluiceRateLimiter limiter;

    @Autowired
    ManualTicker ticker;

    @TestConfiguration(proxyBeanMethods = false)
    static class FrozenClock {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2025-01-01T00:00:00Z"));
        }
    }

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add("backend.uri", BACKEND::uri);
    }

    @AfterAll
    static void stopBackend() {
        BACKEND.close();
    }

    @Test
    void theStoreIsTheInMemoryOneOnTheApplicationsTicker() {
        assertThat(limiter.getStore()).isInstanceOf(InMemoryRateLimiter.class);
        assertThat(ticker).isInstanceOf(Ticker.class);
    }

    @Test
    void burstCapacityPassAndTheNextIsDeniedBeforeTheBackend() {
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> r = as("alice", port, "/scg/a");
            assertThat(r.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(r.body()).isEqualTo("backend saw /scg/a");
            assertThat(header(r, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(5 - i));
            assertThat(header(r, "X-RateLimit-Replenish-Rate")).isEqualTo("1");
            assertThat(header(r, "X-RateLimit-Burst-Capacity")).isEqualTo("5");
            assertThat(header(r, "X-RateLimit-Requested-Tokens")).isEqualTo("1");
            // q: 5 tokens; w: 5 s to refill from empty; t: the seconds until the bucket is full again
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"scg-words\";q=5;w=5");
            assertThat(header(r, "RateLimit")).isEqualTo("\"scg-words\";r=" + (5 - i) + ";t=" + i);
            assertThat(header(r, "Retry-After")).isNull();
        }
        assertThat(BACKEND.hits("/scg/a")).isEqualTo(5);

        HttpResponse<String> denied = as("alice", port, "/scg/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.body()).isEmpty();
        assertThat(header(denied, "X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(denied, "X-RateLimit-Replenish-Rate")).isEqualTo("1");
        assertThat(header(denied, "X-RateLimit-Burst-Capacity")).isEqualTo("5");
        assertThat(header(denied, "X-RateLimit-Requested-Tokens")).isEqualTo("1");
        assertThat(header(denied, "RateLimit")).isEqualTo("\"scg-words\";r=0;t=5");
        assertThat(header(denied, "Retry-After")).isEqualTo("1");
        assertThat(BACKEND.hits("/scg/a"))
                .as("a denied request never reaches the backend")
                .isEqualTo(5);
    }

    @Test
    void eachKeyHasItsOwnBucket() {
        for (int i = 0; i < 5; i++) {
            assertThat(as("grace", port, "/scg/keys").statusCode()).isEqualTo(200);
        }
        assertThat(as("grace", port, "/scg/keys").statusCode()).isEqualTo(429);

        HttpResponse<String> other = as("heidi", port, "/scg/keys");
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(header(other, "X-RateLimit-Remaining")).isEqualTo("4");
        assertThat(BACKEND.hits("/scg/keys")).isEqualTo(6);
    }

    @Test
    void theBucketRefillsAtReplenishRateOnTheStoresClock() {
        for (int i = 0; i < 5; i++) {
            assertThat(as("ivan", port, "/scg/refill").statusCode()).isEqualTo(200);
        }
        assertThat(as("ivan", port, "/scg/refill").statusCode()).isEqualTo(429);
        ticker.advance(Duration.ofSeconds(1)); // one token back: replenishRate 1
        HttpResponse<String> again = as("ivan", port, "/scg/refill");
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(header(again, "X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(as("ivan", port, "/scg/refill").statusCode()).isEqualTo(429);
        assertThat(BACKEND.hits("/scg/refill")).isEqualTo(6);
    }

    @Test
    void requestedTokensSpendsSeveralTokensARequest() {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = as("carol", port, "/slow/a");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(header(r, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(3600 - 1200 * i));
            assertThat(header(r, "X-RateLimit-Requested-Tokens")).isEqualTo("1200");
            assertThat(header(r, "X-RateLimit-Burst-Capacity")).isEqualTo("3600");
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"scg-slow\";q=3600;w=3600");
        }
        HttpResponse<String> denied = as("carol", port, "/slow/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(header(denied, "X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(denied, "Retry-After"))
                .as("1200 tokens at 1 a second")
                .isEqualTo("1200");
        assertThat(BACKEND.hits("/slow/a")).isEqualTo(3);
    }

    @Test
    void sluiceWordsChooseTheAlgorithmAndTheUnit() {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = as("dave", port, "/sluice/a");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(header(r, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
            assertThat(header(r, "X-RateLimit-Burst-Capacity")).isEqualTo("3");
            assertThat(header(r, "X-RateLimit-Requested-Tokens")).isEqualTo("1");
            assertThat(header(r, "X-RateLimit-Replenish-Rate"))
                    .as("not RedisRateLimiter's words")
                    .isNull();
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"sluice-words\";q=3;w=86400");
        }
        HttpResponse<String> denied = as("dave", port, "/sluice/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(header(denied, "Retry-After"))
                .as("one token of 3 a day: 8 h")
                .isEqualTo("28800");
        assertThat(BACKEND.hits("/sluice/a")).isEqualTo(3);
    }

    @Test
    void sluiceWordsTakeAnyWindow() {
        for (int i = 1; i <= 2; i++) {
            HttpResponse<String> r = as("erin", port, "/window/a");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"sluice-window\";q=2;w=90");
            assertThat(header(r, "RateLimit")).isEqualTo("\"sluice-window\";r=" + (2 - i) + ";t=90");
        }
        HttpResponse<String> denied = as("erin", port, "/window/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(header(denied, "Retry-After")).isEqualTo("90");
        assertThat(BACKEND.hits("/window/a")).isEqualTo(2);
    }

    @Test
    void burstCapacityZeroDeniesEveryRequest() {
        HttpResponse<String> r = as("alice", port, "/closed/a");
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(header(r, "X-RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(r, "X-RateLimit-Burst-Capacity")).isEqualTo("0");
        assertThat(header(r, "Retry-After"))
                .as("it never passes: no time to come back")
                .isNull();
        assertThat(BACKEND.hits("/closed/a")).isZero();
    }

    @Test
    void aRouteNamingNoLimiterGetsSluiceAndTheApplicationsKeyResolver() {
        assertThat(as("frank", port, "/defaults/a").statusCode()).isEqualTo(200);
        assertThat(as("frank", port, "/defaults/a").statusCode()).isEqualTo(200);
        HttpResponse<String> denied = as("frank", port, "/defaults/a");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(header(denied, "RateLimit-Policy")).isEqualTo("\"defaults\";q=2;w=2");
        assertThat(as("judy", port, "/defaults/a").statusCode()).isEqualTo(200);
        assertThat(BACKEND.hits("/defaults/a")).isEqualTo(3);
    }

    @Test
    void aRequestWithoutAKeyIsRefusedAsTheGatewayRefusesIt() {
        assertThat(Http.get(port, "/scg/nokey").statusCode()).isEqualTo(403); // deny-empty-key, SCG's default
        assertThat(BACKEND.hits("/scg/nokey")).isZero();
    }
}
