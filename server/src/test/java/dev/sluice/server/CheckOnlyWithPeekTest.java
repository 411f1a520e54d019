package dev.sluice.server;

import static dev.sluice.server.TestServer.check;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ManualTicker;
import dev.sluice.memory.InMemoryRateLimiter;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Check only through the service, on the memory store and its {@code peek}: {@code hits: 0} asks whether the next
 * request would pass and consumes nothing; {@code /v1/peek} asks the same for any cost; multi-descriptor answers
 * carry each descriptor's own numbers. A store without peek gets 501 / UNIMPLEMENTED, and combined numbers.
 */
class CheckOnlyWithPeekTest {
    TestServer s;
    ManualTicker ticker;

    @BeforeEach
    void start() {
        s = TestServer.start("sluice-algorithms.yaml", "envoy/example2.yaml");
        ticker = s.clock();
    }

    @AfterEach
    void stop() {
        s.close();
    }

    TestServer.Resp peek(String body) {
        return TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/v1/peek"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build());
    }

    @Test
    void hitsZeroReportsTheStateAndConsumesNothing() {
        TestServer.Resp fresh = s.post(check("algos", 0, "tb=p"));
        assertThat(fresh.status()).isEqualTo(200);
        assertThat(fresh.status(0).get("outcome").asText()).isEqualTo("checked");
        assertThat(fresh.status(0).get("hits").asLong()).isZero();
        assertThat(fresh.status(0).get("remaining").asLong()).isEqualTo(3);
        assertThat(fresh.status(0).get("reset_after_ns").asLong()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(s.check("algos", "tb=p").status()).isEqualTo(200);
        }
        TestServer.Resp empty = s.post(check("algos", 0, "tb=p"));
        assertThat(empty.status())
                .as("at exactly the limit the next request would be denied: 429 (envoy: OK)")
                .isEqualTo(429);
        assertThat(empty.status(0).get("code").asText()).isEqualTo("OVER_LIMIT");
        assertThat(empty.status(0).get("remaining").asLong()).isZero();
        assertThat(empty.status(0).get("retry_after_ns").asLong()).isEqualTo(1_000_000_000L);
        assertThat(empty.status(0).get("reset_after_ns").asLong()).isEqualTo(3_000_000_000L);
        assertThat(empty.header("Retry-After")).isEqualTo("1");
        ticker.advance(Duration.ofSeconds(1));
        assertThat(s.post(check("algos", 0, "tb=p")).status(0).get("remaining").asLong())
                .isEqualTo(1);
        assertThat(s.post(check("algos", 0, "tb=p")).status(0).get("remaining").asLong())
                .as("still 1: nothing taken")
                .isEqualTo(1);
    }

    @Test
    void anUnknownKeyIsNotCreatedByLooking() {
        for (int i = 0; i < 5; i++) {
            assertThat(s.post(check("algos", 0, "fw90=new"))
                            .status(0)
                            .get("remaining")
                            .asLong())
                    .isEqualTo(2);
        }
        assertThat(s.check("algos", "fw90=new").status(0).get("remaining").asLong())
                .isEqualTo(1);
    }

    @Test
    void peekEndpointAsksAboutAnyCost() {
        assertThat(s.post(check("algos", 2, "tb=c")).status()).isEqualTo(200);
        TestServer.Resp one = peek(check("algos", -1, "tb=c"));
        assertThat(one.status()).as("hits defaults to 1").isEqualTo(200);
        assertThat(one.status(0).get("outcome").asText()).isEqualTo("checked");
        assertThat(one.status(0).get("hits").asLong()).isEqualTo(1);
        assertThat(one.json().get("decision").get("remaining").asLong()).isEqualTo(1);
        TestServer.Resp three = peek(check("algos", 3, "tb=c"));
        assertThat(three.status()).isEqualTo(429);
        assertThat(three.json().get("decision").get("allowed").asBoolean()).isFalse();
        assertThat(three.json().get("decision").get("retry_after_ns").asLong()).isEqualTo(2_000_000_000L);
        assertThat(three.json().get("decision").get("remaining").asLong()).isEqualTo(1);
        assertThat(s.check("algos", "tb=c").status(0).get("remaining").asLong())
                .as("nothing was taken")
                .isZero();
        TestServer.Resp tooMany = peek(check("algos", 4, "tb=c"));
        assertThat(tooMany.status()).isEqualTo(400);
        assertThat(tooMany.json().get("type").asText()).isEqualTo("urn:sluice:problem:invalid-hits");
        TestServer.Resp zero = peek(check("algos", 0, "tb=c"));
        assertThat(zero.status()).isEqualTo(400);
        assertThat(zero.json().get("detail").asText()).contains("hits 0 asks about nothing");
    }

    @Test
    void multiDescriptorAnswersCarryEachDescriptorsNumbers() {
        TestServer.Resp r = s.check("messaging", "message_type=marketing,to_number=1", "to_number=1");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.status(0).get("remaining").asLong()).isEqualTo(4);
        assertThat(r.status(1).get("remaining").asLong()).isEqualTo(99);
        assertThat(r.status(1).has("combined")).isFalse();
        assertThat(r.header("RateLimit"))
                .isEqualTo(
                        "\"messaging.message_type_marketing.to_number\";r=4;t=86400, \"messaging.to_number\";r=99;t=86400");
        s.post(check("messaging", 4, "message_type=marketing,to_number=1"));
        TestServer.Resp over = s.check("messaging", "message_type=marketing,to_number=1", "to_number=1");
        assertThat(over.status()).isEqualTo(429);
        assertThat(over.status(0).get("code").asText()).isEqualTo("OVER_LIMIT");
        assertThat(over.status(1).get("code").asText())
                .as("the number itself is within its limit")
                .isEqualTo("OK");
        assertThat(over.status(1).get("remaining").asLong()).isEqualTo(99);
    }

    @Test
    void aDescriptorWhoseHitsDoNotFitIsTheOneOverTheLimit() {
        assertThat(s.post(check("algos", 2, "tb=h")).status()).isEqualTo(200);
        // tb has 1 left: 2 hits do not fit though 1 would; sw has room
        TestServer.Resp r = s.post(check("algos", 2, "sw=h", "tb=h"));
        assertThat(r.status()).isEqualTo(429);
        assertThat(r.status(0).get("code").asText()).isEqualTo("OK");
        assertThat(r.status(0).get("remaining").asLong())
                .as("nothing taken from sw")
                .isEqualTo(3);
        assertThat(r.status(1).get("code").asText()).isEqualTo("OVER_LIMIT");
        assertThat(r.status(1).get("remaining").asLong()).isEqualTo(1);
        assertThat(r.status(1).get("retry_after_ns").asLong()).isEqualTo(1_000_000_000L);
    }

    @Test
    void aStoreWithoutPeekAnswers501AndCombinedNumbers() throws InterruptedException {
        s.close();
        s = TestServer.startWith(
                new NoPeekStore(InMemoryRateLimiter.builder().ticker(ticker).build()),
                UnaryOperator.identity(),
                "sluice-algorithms.yaml",
                "envoy/example2.yaml");
        TestServer.Resp r = s.post(check("algos", 0, "tb=u"));
        assertThat(r.status()).isEqualTo(501);
        assertThat(r.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(r.json().get("type").asText()).isEqualTo("urn:sluice:problem:peek-unsupported");
        assertThat(r.json().get("detail").asText()).contains("the test store").contains("send hits ≥ 1");
        TestServer.Resp mixed =
                s.post("{\"domain\":\"algos\",\"descriptors\":[{\"entries\":[{\"key\":\"tb\",\"value\":\"u\"}]},"
                        + "{\"entries\":[{\"key\":\"sw\",\"value\":\"u\"}],\"hits\":0}]}");
        assertThat(mixed.status()).isEqualTo(501);
        assertThat(s.check("algos", "tb=u").status(0).get("remaining").asLong())
                .as("the refused request took nothing")
                .isEqualTo(2);
        assertThat(peek(check("algos", 1, "tb=u")).status()).isEqualTo(501);

        TestServer.Resp both = s.post(check("algos", 1, "sw=u", "tb=u"));
        assertThat(both.status()).isEqualTo(200);
        assertThat(both.status(1).get("combined").asBoolean())
                .as("fallback: only the atomic decision is known")
                .isTrue();
        assertThat(both.header("RateLimit")).doesNotContain(",");

        ManagedChannel ch = NettyChannelBuilder.forAddress(
                        "127.0.0.1", s.server.grpcAddress().getPort())
                .usePlaintext()
                .build();
        try {
            RateLimitRequest req = RateLimitRequest.newBuilder()
                    .setDomain("algos")
                    .addDescriptors(RateLimitDescriptor.newBuilder()
                            .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                    .setKey("tb")
                                    .setValue("u"))
                            .setHitsAddend(com.google.protobuf.UInt64Value.of(0)))
                    .build();
            assertThatThrownBy(() -> RateLimitServiceGrpc.newBlockingStub(ch)
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .shouldRateLimit(req))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
                        assertThat(e.getStatus().getDescription()).startsWith("peek-unsupported: the test store");
                    });
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
