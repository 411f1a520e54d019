package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Degradation;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.redis.RedisServer;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import dev.sluice.tck.Eventually;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice serve --store redis://… --failure-policy …} with a real redis-server that is killed (SIGKILL) while
 * the service runs, then started again: every answer during the outage comes back (no hang) with the policy applied
 * and marked degraded (JSON, header, gRPC), the metrics count it by
 * cause, {@code /readyz} says degraded without failing, and once Redis is back the decisions are Redis's again,
 * without a restart. The store is opened exactly as the CLI opens it ({@link Stores#open}), with its default budget.
 */
class FailurePolicyEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private static final String RULES = """
            domain: fp
            descriptors:
              - key: user
                rate_limit:
                  algorithm: token_bucket
                  unit: minute
                  requests_per_unit: 3
            """;
    /** How long Redis may take to be used again after it is back: Lettuce's reconnect plus a probe interval. */
    private static final Duration RECOVERY = Duration.ofSeconds(20);
    /**
     * The store budget of these tests, set as {@code --store-timeout} would: long enough that a healthy Redis on
     * a busy 2-core machine never misses it (an exact answer is asserted before and after the outage), short
     * enough that the calls which open the circuit after the kill do not drag. Every HTTP call's 10 s timeout is
     * the hang guard: 10 times this budget.
     */
    private static final Duration BUDGET = Duration.ofSeconds(1);

    @Test
    void failOpenAllowsEveryRequestMarkedDegradedWhileRedisIsDown() throws Exception {
        try (Running r = Running.start(FailurePolicy.FAIL_OPEN)) {
            r.exactBeforeTheOutage();
            r.redis.kill();
            String user = fresh();
            Degradation cause = null;
            for (int i = 0; i < 6; i++) { // twice the limit: fail open knows nothing about the key
                Answer a = r.check(user);
                assertThat(a.status).as(a.body()).isEqualTo(200);
                cause = a.degradedCause();
                assertThat(a.json.get("statuses").get(0).get("degraded").asText())
                        .isEqualTo(cause.label());
                assertThat(a.json.get("statuses").get(0).get("remaining").asLong())
                        .as("a fresh key's numbers")
                        .isEqualTo(2);
            }
            r.grpcIsDegraded(user, cause, RateLimitResponse.Code.OK);
            r.countedAndReadyButDegraded();
            r.exactAgainAfterRedisIsBack();
        }
    }

    @Test
    void failClosedDeniesEveryRequestMarkedDegradedWhileRedisIsDown() throws Exception {
        try (Running r = Running.start(FailurePolicy.FAIL_CLOSED)) {
            r.exactBeforeTheOutage();
            r.redis.kill();
            String user = fresh();
            Degradation cause = null;
            for (int i = 0; i < 4; i++) {
                Answer a = r.check(user);
                assertThat(a.status).as(a.body()).isEqualTo(429);
                cause = a.degradedCause();
                assertThat(a.json.get("statuses").get(0).get("code").asText()).isEqualTo("OVER_LIMIT");
                assertThat(a.headers.firstValue("Retry-After"))
                        .as("retry when the store is probed again")
                        .hasValue("1");
            }
            r.grpcIsDegraded(user, cause, RateLimitResponse.Code.OVER_LIMIT);
            r.countedAndReadyButDegraded();
            r.exactAgainAfterRedisIsBack();
        }
    }

    @Test
    void fallbackLocalAppliesTheSameLimitsInMemoryThenRedisTakesOver() throws Exception {
        try (Running r = Running.start(FailurePolicy.FALLBACK_LOCAL)) {
            r.exactBeforeTheOutage();
            r.redis.kill();
            String user = fresh();
            for (long remaining = 2; remaining >= 0; remaining--) {
                Answer a = r.check(user);
                assertThat(a.status).as(a.body()).isEqualTo(200);
                a.degradedCause(); // asserts the answer says it is degraded
                assertThat(a.json.get("statuses").get(0).get("remaining").asLong())
                        .isEqualTo(remaining);
            }
            Answer over = r.check(user);
            assertThat(over.status)
                    .as("the local limiter enforces the rule: 3 per minute")
                    .isEqualTo(429);
            over.degradedCause();
            assertThat(over.json.get("statuses").get(0).get("retry_after_ns").asLong())
                    .isBetween(1L, 20_000_000_000L);
            r.countedAndReadyButDegraded();
            r.exactAgainAfterRedisIsBack();
            Answer redisDecides = r.check(user);
            for (int i = 0; i < 2 && redisDecides.json.has("degraded"); i++) {
                redisDecides = r.check(user); // a call that missed its budget on this busy machine
            }
            assertThat(redisDecides.json.has("degraded")).isFalse();
            assertThat(redisDecides.status)
                    .as("Redis has its own state: the local one is not copied")
                    .isEqualTo(200);
        }
    }

    @Test
    void theServiceStartsWithRedisDownAndUsesItOnceItIsUp() throws Exception {
        RedisServer redis = RedisServer.onFreePort();
        try (Stores.Opened defaults =
                Stores.open(redis.uri(), 1, Stores.Budget.STORE_DEFAULT, 1, FailurePolicy.FAIL_OPEN)) {
            assertThat(defaults.budget()).as("the Redis default budget").contains(Stores.REDIS_BUDGET);
            assertThat(defaults.limiter()).as("opened although nothing listens").isNotNull();
        }
        try (Running r =
                new Running(redis, Stores.open(redis.uri(), 1, Stores.Budget.of(BUDGET), 1, FailurePolicy.FAIL_OPEN))) {
            Answer a = r.check(fresh());
            assertThat(a.status).as(a.body()).isEqualTo(200);
            assertThat(a.degradedCause()).as("nothing listens yet").isEqualTo(Degradation.UNAVAILABLE);
            Answer ready = r.get("/readyz");
            assertThat(ready.status).isEqualTo(200);
            assertThat(ready.json.get("status").asText()).isEqualTo("degraded");
            assertThat(r.metric("sluice_store_healthy")).isEqualTo(0);
            redis.startProcess();
            r.exactAgainAfterRedisIsBack();
            assertThat(r.metric("sluice_store_healthy")).isEqualTo(1);
        }
    }

    private static String fresh() {
        return UUID.randomUUID().toString();
    }

    record Answer(int status, java.net.http.HttpHeaders headers, JsonNode json) {
        String body() {
            return json.toString();
        }

        /** The cause this answer was degraded by, asserted to be said the same way in the body and the header. */
        Degradation degradedCause() {
            assertThat(json.has("degraded")).as("degraded answer: " + json).isTrue();
            String label = json.get("degraded").asText();
            assertThat(headers.firstValue("Sluice-Degraded")).hasValue(label);
            for (Degradation d : Degradation.values()) {
                if (d != Degradation.NONE && d.label().equals(label)) {
                    return d;
                }
            }
            throw new AssertionError("unknown degradation label " + label);
        }
    }

    /** Redis, the store opened on it as {@code serve} opens it, and the service on that store. */
    private static final class Running implements AutoCloseable {
        final RedisServer redis;
        final Stores.Opened store;
        final SluiceServer server;
        final String base;
        /** Degraded answers seen over HTTP, by cause. */
        final java.util.Map<Degradation, Integer> seen = new java.util.EnumMap<>(Degradation.class);
        /** The degraded-decision counts before the outage, by cause. */
        final java.util.Map<Degradation, Double> before = new java.util.EnumMap<>(Degradation.class);

        Running(RedisServer redis, Stores.Opened store) throws Exception {
            this.redis = redis;
            this.store = store;
            SluiceServer.Settings s = SluiceServer.Settings.defaults(store.limiter(), RuleSet.parse("fp.yaml", RULES))
                    .withStore(store.limiter(), store.name(), store.budget().orElseThrow());
            this.server = SluiceServer.start(s);
            this.base = "http://127.0.0.1:" + server.httpAddress().getPort();
        }

        static Running start(FailurePolicy policy) throws Exception {
            RedisServer redis = RedisServer.start();
            Stores.Opened store = Stores.open(redis.uri(), 1, Stores.Budget.of(BUDGET), 1, policy);
            assertThat(store.budget())
                    .as("--store-timeout wins over the default")
                    .contains(BUDGET);
            return new Running(redis, store);
        }

        /** One check over HTTP; its 10 s timeout is the hang guard (Redis is down, or back, or up). */
        Answer check(String user) throws IOException, InterruptedException {
            String body = "{\"domain\":\"fp\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"" + user
                    + "\"}]}]}";
            HttpResponse<String> resp = HTTP.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                            .timeout(Duration.ofSeconds(10))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            Answer a = new Answer(resp.statusCode(), resp.headers(), JSON.readTree(resp.body()));
            if (a.json.has("degraded")) {
                seen.merge(a.degradedCause(), 1, Integer::sum);
            }
            return a;
        }

        Answer get(String path) throws IOException, InterruptedException {
            HttpResponse<String> resp = HTTP.send(
                    HttpRequest.newBuilder(URI.create(base + path))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Answer(
                    resp.statusCode(),
                    resp.headers(),
                    path.equals("/metrics")
                            ? JSON.createObjectNode().put("text", resp.body())
                            : JSON.readTree(resp.body()));
        }

        /** A sample's value in the Prometheus text, e.g. {@code sluice_store_healthy} or one with its labels. */
        double metric(String sample) throws IOException, InterruptedException {
            return PrometheusSamples.value(get("/metrics").json.get("text").asText(), sample);
        }

        double degradedTotal(Degradation cause) throws IOException, InterruptedException {
            return metric("sluice_degraded_decisions_total{cause=\"" + cause.label() + "\"}");
        }

        /** Waits until {@code /readyz} says the store decides (it may still be opening in the background). */
        void awaitReady() throws Exception {
            java.util.concurrent.atomic.AtomicReference<Answer> ready =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Eventually.await(RECOVERY, "/readyz saying ready", () -> {
                ready.set(get("/readyz"));
                return ready.get().json.path("status").asText().equals("ready");
            });
            assertThat(ready.get().status).isEqualTo(200);
            assertThat(ready.get().json.get("store_healthy").asBoolean()).isTrue();
        }

        void exactBeforeTheOutage() throws Exception {
            awaitReady();
            exactSequence();
            awaitReady();
            assertThat(metric("sluice_store_healthy")).isEqualTo(1);
            for (Degradation d : Degradation.values()) {
                if (d != Degradation.NONE) {
                    // every cause is exported from the start (a readiness probe before the store opened may count)
                    before.put(d, degradedTotal(d));
                }
            }
        }

        void grpcIsDegraded(String user, Degradation cause, RateLimitResponse.Code code) throws Exception {
            ManagedChannel ch = NettyChannelBuilder.forAddress(
                            "127.0.0.1", server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
            try {
                RateLimitResponse g = RateLimitServiceGrpc.newBlockingStub(ch)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .shouldRateLimit(RateLimitRequest.newBuilder()
                                .setDomain("fp")
                                .addDescriptors(RateLimitDescriptor.newBuilder()
                                        .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                                .setKey("user")
                                                .setValue(user)))
                                .build());
                assertThat(g.getOverallCode()).isEqualTo(code);
                assertThat(g.getResponseHeadersToAddList())
                        .extracting(HeaderValue::getKey, HeaderValue::getValue)
                        .contains(org.assertj.core.groups.Tuple.tuple("Sluice-Degraded", cause.label()));
                assertThat(g.getDynamicMetadata().getFieldsOrThrow("degraded").getStringValue())
                        .isEqualTo(cause.label());
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }

        /**
         * The degraded decisions are counted by cause (at least those seen over HTTP: gRPC and readiness probes
         * count too), and {@code /readyz} stays 200 but says degraded, while {@code /healthz} is untouched.
         */
        void countedAndReadyButDegraded() throws Exception {
            assertThat(seen).isNotEmpty();
            for (var e : seen.entrySet()) {
                assertThat(degradedTotal(e.getKey()) - before.getOrDefault(e.getKey(), 0.0))
                        .as("counted as " + e.getKey().label())
                        .isGreaterThanOrEqualTo(e.getValue());
            }
            Answer ready = get("/readyz");
            assertThat(ready.status)
                    .as("the service still answers every request, by its policy")
                    .isEqualTo(200);
            assertThat(ready.json.get("status").asText()).isEqualTo("degraded");
            assertThat(ready.json.get("store_healthy").asBoolean()).isFalse();
            assertThat(ready.json.get("failure_policy").asText())
                    .isEqualTo(server.service()
                            .storeHealth()
                            .orElseThrow()
                            .policy()
                            .name()
                            .toLowerCase(java.util.Locale.ROOT));
            assertThat(get("/healthz").status).isEqualTo(200);
            if (seen.keySet().stream().allMatch(Degradation::storeUnhealthy)) {
                assertThat(metric("sluice_store_healthy"))
                        .as("the circuit is open")
                        .isZero();
            }
        }

        /** Restarts Redis (empty: nothing is persisted) and waits until Redis decides again, exactly. */
        void exactAgainAfterRedisIsBack() throws Exception {
            if (!isRunning()) {
                redis.startProcess();
            }
            // Lettuce reconnects on its own schedule
            Eventually.await(
                    RECOVERY, "Redis deciding again", () -> !check(fresh()).json.has("degraded"));
            awaitReady();
            exactSequence();
            awaitReady();
        }

        /**
         * Redis decides a fresh key exactly: remaining 2, 1, 0, then 429, and not one answer of a healthy Redis is
         * degraded.
         */
        void exactSequence() throws Exception {
            String user = fresh();
            for (long remaining = 2; remaining >= -1; remaining--) {
                Answer a = check(user);
                assertThat(a.json.has("degraded"))
                        .as("a healthy Redis decides: %s", a.body())
                        .isFalse();
                assertThat(a.headers.firstValue("Sluice-Degraded")).isEmpty();
                if (remaining >= 0) {
                    assertThat(a.status).as(a.body()).isEqualTo(200);
                    assertThat(a.json.get("statuses").get(0).get("remaining").asLong())
                            .isEqualTo(remaining);
                } else {
                    assertThat(a.status).as(a.body()).isEqualTo(429);
                }
            }
        }

        private boolean isRunning() {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), redis.port())) {
                return s.isConnected();
            } catch (IOException e) {
                return false;
            }
        }

        @Override
        public void close() {
            server.close();
            store.closeResources();
            redis.close();
        }
    }
}
