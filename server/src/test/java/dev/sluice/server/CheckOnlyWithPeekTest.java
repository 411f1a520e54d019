package dev.sluice.server;

import static dev.sluice.server.TestServer.check;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With a store that can peek (here the test double {@link PeekingStore}), {@code hits: 0} checks without
 * consuming and multi-descriptor answers carry each descriptor's own numbers. This is what the service does as
 * soon as core's stores offer {@code peek(key, limit, cost)}.
 */
class CheckOnlyWithPeekTest {
    final ManualTicker ticker = ManualTicker.atEpochNanos(TestServer.T0);
    TestServer s;

    @BeforeEach
    void start() {
        s = TestServer.startWith(new PeekingStore(ticker), UnaryOperator.identity(), "sluice-algorithms.yaml",
                "envoy/example2.yaml");
        assertThat(s.server.service().canPeek()).isTrue();
    }

    @AfterEach
    void stop() {
        s.close();
    }

    @Test
    void hitsZeroReportsTheStateAndConsumesNothing() {
        TestServer.Resp fresh = s.post(check("algos", 0, "tb=p"));
        assertThat(fresh.status()).isEqualTo(200);
        assertThat(fresh.status(0).get("outcome").asText()).isEqualTo("checked");
        assertThat(fresh.status(0).get("remaining").asLong()).isEqualTo(3);
        assertThat(fresh.status(0).get("reset_after_ns").asLong()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(s.check("algos", "tb=p").status()).isEqualTo(200);
        }
        TestServer.Resp empty = s.post(check("algos", 0, "tb=p"));
        assertThat(empty.status()).as("a check that would be denied is a 429").isEqualTo(429);
        assertThat(empty.status(0).get("remaining").asLong()).isZero();
        assertThat(empty.status(0).get("retry_after_ns").asLong()).isEqualTo(1_000_000_000L);
        assertThat(empty.status(0).get("reset_after_ns").asLong()).isEqualTo(3_000_000_000L);
        ticker.advance(Duration.ofSeconds(1));
        assertThat(s.post(check("algos", 0, "tb=p")).status(0).get("remaining").asLong()).isEqualTo(1);
        assertThat(s.post(check("algos", 0, "tb=p")).status(0).get("remaining").asLong()).as("still 1: nothing taken")
                .isEqualTo(1);
    }

    @Test
    void multiDescriptorAnswersCarryEachDescriptorsNumbers() {
        TestServer.Resp r = s.check("messaging", "message_type=marketing,to_number=1", "to_number=1");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.status(0).get("remaining").asLong()).isEqualTo(4);
        assertThat(r.status(1).get("remaining").asLong()).isEqualTo(99);
        assertThat(r.status(1).has("combined")).isFalse();
        assertThat(r.header("RateLimit")).isEqualTo(
                "\"messaging.message_type_marketing.to_number\";r=4;t=86400, \"messaging.to_number\";r=99;t=86400");
        s.post(check("messaging", 4, "message_type=marketing,to_number=1"));
        TestServer.Resp over = s.check("messaging", "message_type=marketing,to_number=1", "to_number=1");
        assertThat(over.status()).isEqualTo(429);
        assertThat(over.status(0).get("code").asText()).isEqualTo("OVER_LIMIT");
        assertThat(over.status(1).get("code").asText()).as("the number itself is within its limit").isEqualTo("OK");
        assertThat(over.status(1).get("remaining").asLong()).isEqualTo(99);
    }
}
