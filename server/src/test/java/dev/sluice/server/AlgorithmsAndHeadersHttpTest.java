package dev.sluice.server;

import static dev.sluice.server.TestServer.check;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Sluice's additions (algorithm, burst, window), tiers as descriptors, and the IETF RateLimit headers. */
class AlgorithmsAndHeadersHttpTest {
    TestServer s;

    @BeforeEach
    void start() {
        s = TestServer.start("sluice-algorithms.yaml");
    }

    @AfterEach
    void stop() {
        s.close();
    }

    @Test
    void tokenBucketBurstsThenRefillsAtItsRate() {
        for (int i = 2; i >= 0; i--) {
            TestServer.Resp r = s.check("algos", "tb=alice");
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.status(0).get("remaining").asLong()).isEqualTo(i);
        }
        TestServer.Resp denied = s.check("algos", "tb=alice");
        assertThat(denied.status()).isEqualTo(429);
        assertThat(denied.status(0).get("retry_after_ns").asLong()).isEqualTo(1_000_000_000L);
        assertThat(denied.status(0).get("reset_after_ns").asLong()).isEqualTo(3_000_000_000L);
        assertThat(denied.header("Retry-After")).isEqualTo("1");
        assertThat(denied.header("RateLimit-Policy")).isEqualTo("\"algos.tb\";q=3;w=3");
        assertThat(denied.header("RateLimit")).isEqualTo("\"algos.tb\";r=0;t=3");
        s.clock().advance(Duration.ofMillis(999));
        assertThat(s.check("algos", "tb=alice").status()).isEqualTo(429);
        s.clock().advance(Duration.ofMillis(1));
        assertThat(s.check("algos", "tb=alice").status()).isEqualTo(200);
    }

    @Test
    void gcraSpacesRequestsAtItsRate() {
        assertThat(s.check("algos", "gcra=x").status()).isEqualTo(200);
        assertThat(s.check("algos", "gcra=x").status()).isEqualTo(200);
        TestServer.Resp denied = s.check("algos", "gcra=x");
        assertThat(denied.status()).isEqualTo(429);
        assertThat(denied.status(0).get("retry_after_ns").asLong()).isEqualTo(500_000_000L);
        assertThat(denied.status(0).get("limit").get("algorithm").asText()).isEqualTo("gcra");
    }

    @Test
    void ninetySecondFixedWindowAlignedToTheEpoch() {
        TestServer.Resp first = s.check("algos", "fw90=x");
        assertThat(first.status(0).get("reset_after_ns").asLong()).isEqualTo(90_000_000_000L);
        assertThat(first.status(0).get("limit").get("window").asText()).isEqualTo("90s");
        assertThat(first.header("RateLimit-Policy")).isEqualTo("\"algos.fw90\";q=2;w=90");
        s.check("algos", "fw90=x");
        s.clock().advance(Duration.ofSeconds(30));
        TestServer.Resp denied = s.check("algos", "fw90=x");
        assertThat(denied.status()).isEqualTo(429);
        assertThat(denied.header("Retry-After")).isEqualTo("60");
        s.clock().advance(Duration.ofSeconds(60));
        assertThat(s.check("algos", "fw90=x").status()).isEqualTo(200);
    }

    @Test
    void slidingWindowAndLogCountATrailingWindow() {
        for (int i = 0; i < 3; i++) {
            assertThat(s.check("algos", "sw=x").status()).isEqualTo(200);
        }
        assertThat(s.check("algos", "sw=x").status()).isEqualTo(429);
        assertThat(s.check("algos", "sl=x").status()).isEqualTo(200);
        s.clock().advance(Duration.ofSeconds(30));
        assertThat(s.check("algos", "sl=x").status()).isEqualTo(200);
        TestServer.Resp denied = s.check("algos", "sl=x");
        assertThat(denied.status()).isEqualTo(429);
        assertThat(denied.status(0).get("retry_after_ns").asLong()).isEqualTo(30_000_000_000L);
    }

    @Test
    void tiersAreDescriptors() {
        for (int i = 0; i < 2; i++) {
            assertThat(s.check("algos", "plan=free,user=42").status()).isEqualTo(200);
        }
        assertThat(s.check("algos", "plan=free,user=42").status()).isEqualTo(429);
        for (int i = 0; i < 5; i++) {
            assertThat(s.check("algos", "plan=pro,user=43").status()).isEqualTo(200);
        }
        assertThat(s.check("algos", "plan=pro,user=43").status()).isEqualTo(429);
        assertThat(s.check("algos", "plan=free,user=44").status(0).get("rule").asText())
                .isEqualTo("algos.plan_free.user");
    }

    @Test
    void severalLimitedDescriptorsAreAllOrNothingWithOneHeaderItemEach() {
        TestServer.Resp both = s.post(check("algos", 2, "sw=y", "tb=y"));
        assertThat(both.status()).isEqualTo(200);
        assertThat(both.header("RateLimit-Policy")).isEqualTo("\"algos.sw\";q=3;w=90, \"algos.tb\";q=3;w=3");
        assertThat(both.json().get("decision").get("remaining").asLong()).isEqualTo(1);
        // each descriptor's own numbers, read with a peek right after the all-or-nothing decision
        assertThat(both.header("RateLimit")).startsWith("\"algos.sw\";r=1;t=").endsWith(", \"algos.tb\";r=1;t=2");
        assertThat(both.status(1).has("combined")).isFalse();
        assertThat(both.status(1).get("remaining").asLong()).isEqualTo(1);
        // 2 more on sw would exceed it: nothing is taken from tb either
        assertThat(s.post(check("algos", 2, "sw=y", "tb=y")).status()).isEqualTo(429);
        TestServer.Resp tb = s.check("algos", "tb=y");
        assertThat(tb.status(0).get("remaining").asLong()).isZero();
    }

    @Test
    void callerSentLimitIsUsedWhenGiven() {
        String body = "{\"domain\":\"algos\",\"descriptors\":[{\"entries\":[{\"key\":\"custom\",\"value\":\"1\"}],"
                + "\"limit\":{\"algorithm\":\"token_bucket\",\"requests_per_unit\":1,\"window\":\"2s\",\"burst\":2}}]}";
        assertThat(s.post(body).status()).isEqualTo(200);
        assertThat(s.post(body).status()).isEqualTo(200);
        TestServer.Resp denied = s.post(body);
        assertThat(denied.status()).isEqualTo(429);
        assertThat(denied.status(0).get("retry_after_ns").asLong()).isEqualTo(2_000_000_000L);
    }

    @Test
    void healthReadinessAndMetrics() {
        assertThat(s.get("/healthz").status()).isEqualTo(200);
        TestServer.Resp ready = s.get("/readyz");
        assertThat(ready.status()).isEqualTo(200);
        assertThat(ready.json().get("store").asText()).isEqualTo("memory");
        s.check("algos", "tb=m");
        String metrics = s.get("/metrics").body();
        assertThat(metrics)
                .contains("sluice_decisions_total{domain=\"algos\",outcome=\"ok\",rule=\"algos.tb\"} 1.0")
                .contains("sluice_decision_duration_seconds_bucket{protocol=\"http\"");
    }
}
