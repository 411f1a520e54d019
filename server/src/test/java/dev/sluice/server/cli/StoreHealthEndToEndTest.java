package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.redis.RedisServer;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import dev.sluice.tck.Eventually;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Health is true in every mode: the service on a real Redis or PostgreSQL, the store opened and wrapped exactly as
 * {@code sluice serve --store … --failure-policy … --leases} does it ({@link Stores#open}, {@link Stores#leased}), so
 * that what answers is leases over a failure policy over the store. Every surface ({@code /readyz},
 * {@code sluice_store_healthy}, {@code sluice_degraded_decisions_total{cause}}, {@code sluice_store_info}, the
 * dashboard's data, envoy's {@code /healthcheck}, gRPC health) must report the remote store's health and the policy
 * through the leases: while Redis is killed, and again once it is back, without traffic. The readiness probe must
 * never write to the store: on PostgreSQL its rows are counted.
 *
 * <p>Counted, not timed: every wait is a loop on a condition with a hang guard of {@link #GUARD} (Lettuce reconnects
 * on its own schedule, the service's store watch looks once a second).
 */
class StoreHealthEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private static final String RULES = """
            domain: health
            descriptors:
              - key: user
                rate_limit:
                  algorithm: token_bucket
                  unit: minute
                  requests_per_unit: 3
            """;
    /** The store budget, as {@code --store-timeout}: a healthy store on a busy machine never misses it. */
    private static final Duration BUDGET = Duration.ofSeconds(1);
    /** The hang guard of every wait: 20 times the budget. */
    private static final Duration GUARD = Duration.ofSeconds(20);
    /** How many permits a key may lease ({@code --leases 64}). */
    private static final long LEASES = 64;

    private static EmbeddedPostgres postgres;

    @BeforeAll
    static void startPostgres() throws Exception {
        postgres = EmbeddedPostgres.builder().setServerConfig("fsync", "off").start();
        assertThat(SluiceCommand.commandLine().execute("migrate", "--store", postgresUri()))
                .isZero();
    }

    @AfterAll
    static void stopPostgres() throws IOException {
        if (postgres != null) {
            postgres.close();
        }
    }

    private static String postgresUri() {
        return "postgresql://postgres@localhost:" + postgres.getPort() + "/postgres";
    }

    @ParameterizedTest
    @EnumSource(FailurePolicy.class)
    void withLeasesEverySurfaceReportsARedisOutageAndTheRecovery(FailurePolicy policy) throws Exception {
        String label = policy.name().toLowerCase(Locale.ROOT);
        RedisServer redis = RedisServer.start();
        try (Service s =
                new Service(Stores.leased(Stores.open(redis.uri(), 1, Stores.Budget.of(BUDGET), 1, policy), LEASES))) {
            s.await(
                    "the store decides the readiness probe",
                    x -> x.get("/readyz").json.path("status").asText().equals("ready"));
            s.assertHealthy("redis+leases", label);
            assertThat(s.check(fresh()).json.has("degraded"))
                    .as("Redis decides")
                    .isFalse();

            redis.kill();
            for (int i = 0; i < 6; i++) { // cold keys: no lease holds permits, so every call is the store's
                Answer a = s.check(fresh());
                assertThat(a.field("degraded").asText()).as(a.body()).isNotEmpty();
            }
            s.await("the circuit is open", x -> x.metric("sluice_store_healthy") == 0);
            Answer ready = s.get("/readyz");
            assertThat(ready.status)
                    .as("the policy answers every request: still ready")
                    .isEqualTo(200);
            assertThat(ready.field("status").asText()).isEqualTo("degraded");
            assertThat(ready.field("store").asText()).isEqualTo("redis+leases");
            assertThat(ready.field("store_healthy").asBoolean()).isFalse();
            assertThat(ready.field("store_opened").asBoolean()).isTrue();
            assertThat(ready.field("failure_policy").asText()).isEqualTo(label);
            String cause = ready.field("degraded").asText();
            assertThat(cause).as("Redis killed: its connection is gone").isEqualTo("unavailable");
            assertThat(ready.headers.firstValue("Sluice-Degraded")).hasValue(cause);

            double before = s.metric("sluice_degraded_decisions_total{cause=\"unavailable\"}");
            for (int i = 0; i < 5; i++) {
                assertThat(s.check(fresh()).field("degraded").asText()).isEqualTo("unavailable");
            }
            assertThat(s.metric("sluice_degraded_decisions_total{cause=\"unavailable\"}") - before)
                    .as("the five answers above, counted by cause (the service's own probes may add some)")
                    .isGreaterThanOrEqualTo(5);
            assertThat(s.metric("sluice_store_healthy")).isZero();
            assertThat(s.metric("sluice_store_info{failure_policy=\"" + label + "\",store=\"redis+leases\"}"))
                    .isEqualTo(1);

            JsonNode store = s.get("/v1/dashboard").field("store");
            assertThat(store.get("healthy").asBoolean()).isFalse();
            assertThat(store.get("cause").asText()).isEqualTo("unavailable");
            assertThat(store.get("opened").asBoolean()).isTrue();
            assertThat(store.get("failure_policy").asText()).isEqualTo(label);
            assertThat(store.get("degraded").get("unavailable").asLong()).isGreaterThanOrEqualTo(11);

            assertThat(s.get("/healthcheck").status)
                    .as("envoy's health check fails while its Redis is down")
                    .isEqualTo(500);
            s.await("gRPC health follows", x -> x.grpcHealth("ratelimit") == ServingStatus.NOT_SERVING);
            assertThat(s.grpcHealth("")).as("the server itself serves").isEqualTo(ServingStatus.SERVING);
            assertThat(s.get("/healthz").status).isEqualTo(200);

            redis.startProcess();
            // no request is sent: the service's own probe finds Redis back and closes the circuit
            s.await("healthy again without traffic", x -> x.metric("sluice_store_healthy") == 1);
            s.assertHealthy("redis+leases", label);
            assertThat(s.check(fresh()).json.has("degraded"))
                    .as("Redis decides again")
                    .isFalse();
        } finally {
            redis.close();
        }
    }

    @Test
    void aStoreNotOpenedYetIsReportedAsSuchUntilItOpens() throws Exception {
        RedisServer redis = RedisServer.onFreePort(); // nothing listens yet
        try (Service s = new Service(Stores.leased(
                Stores.open(redis.uri(), 1, Stores.Budget.of(BUDGET), 1, FailurePolicy.FAIL_CLOSED), LEASES))) {
            Answer ready = s.get("/readyz");
            assertThat(ready.status)
                    .as("fail_closed answers every request (429): still ready")
                    .isEqualTo(200);
            assertThat(ready.field("status").asText()).isEqualTo("degraded");
            assertThat(ready.field("store_healthy").asBoolean()).isFalse();
            assertThat(ready.field("store_opened").asBoolean()).isFalse();
            assertThat(ready.field("failure_policy").asText()).isEqualTo("fail_closed");
            assertThat(ready.field("degraded").asText()).isEqualTo("unavailable");
            assertThat(s.metric("sluice_store_healthy")).isZero();
            assertThat(s.get("/v1/dashboard").field("store").get("opened").asBoolean())
                    .isFalse();
            assertThat(s.get("/healthcheck").status)
                    .as("envoy: unhealthy until Redis first connects")
                    .isEqualTo(500);
            assertThat(s.grpcHealth("ratelimit")).isEqualTo(ServingStatus.NOT_SERVING);
            assertThat(s.check(fresh()).status).as("fail_closed").isEqualTo(429);

            redis.startProcess();
            s.await("opened in the background", x -> x.metric("sluice_store_healthy") == 1);
            s.assertHealthy("redis+leases", "fail_closed");
            assertThat(s.get("/readyz").field("store_opened").asBoolean()).isTrue();
        } finally {
            redis.close();
        }
    }

    @ParameterizedTest(name = "leases {0}, {1}")
    @CsvSource({"false, FAIL_OPEN", "true, FALLBACK_LOCAL"})
    void readinessProbesWriteNothingToPostgres(boolean leases, FailurePolicy policy) throws Exception {
        Stores.Opened opened = Stores.open(postgresUri(), 1, Stores.Budget.of(BUDGET), 2, policy);
        try (Service s = new Service(leases ? Stores.leased(opened, LEASES) : opened)) {
            long rows = rows("");
            for (int i = 0; i < 25; i++) {
                Answer ready = s.get("/readyz");
                assertThat(ready.status).isEqualTo(200);
                assertThat(ready.field("status").asText()).as(ready.body()).isEqualTo("ready");
                assertThat(ready.field("store_healthy").asBoolean()).isTrue();
                assertThat(ready.field("failure_policy").asText())
                        .isEqualTo(policy.name().toLowerCase(Locale.ROOT));
            }
            assertThat(rows(" where key = 'sluice:readyz'"))
                    .as("rows of the probe key")
                    .isZero();
            assertThat(rows(""))
                    .as("rows of every Sluice table after 25 probes")
                    .isEqualTo(rows);

            assertThat(s.check(fresh()).json.has("degraded")).isFalse();
            assertThat(rows(""))
                    .as("a decision writes its row: the count sees writes")
                    .isEqualTo(rows + 1);
        }
    }

    /** Rows of the three Sluice tables (bucket, window, log) matching {@code where}. */
    private static long rows(String where) throws Exception {
        try (Connection c = postgres.getPostgresDatabase().getConnection();
                Statement st = c.createStatement();
                ResultSet r = st.executeQuery("select (select count(*) from sluice_bucket" + where
                        + ") + (select count(*) from sluice_window" + where + ") + (select count(*) from sluice_log"
                        + where + ")")) {
            r.next();
            return r.getLong(1);
        }
    }

    private static String fresh() {
        return UUID.randomUUID().toString();
    }

    record Answer(int status, java.net.http.HttpHeaders headers, JsonNode json) {
        String body() {
            return json.toString();
        }

        /** A field of the JSON body, asserted to be there (a missing one names the body it is missing from). */
        JsonNode field(String name) {
            assertThat(json.has(name)).as("'%s' in %s", name, body()).isTrue();
            return json.get(name);
        }
    }

    /** The service on an opened store, as {@code serve} starts it (HTTP and gRPC), and clients of both. */
    private static final class Service implements AutoCloseable {
        final Stores.Opened store;
        final SluiceServer server;
        final String base;
        final ManagedChannel grpc;

        Service(Stores.Opened store) throws Exception {
            this.store = store;
            SluiceServer.Settings s = SluiceServer.Settings.defaults(store.limiter(), RuleSet.parse("h.yaml", RULES))
                    .withStore(store.limiter(), store.name(), store.budget().orElseThrow());
            this.server = SluiceServer.start(s);
            this.base = "http://127.0.0.1:" + server.httpAddress().getPort();
            this.grpc = NettyChannelBuilder.forAddress(
                            "127.0.0.1", server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
        }

        /** Every surface says the store decides, with its name and policy. */
        void assertHealthy(String name, String policy) throws Exception {
            Answer ready = get("/readyz");
            assertThat(ready.status).isEqualTo(200);
            assertThat(ready.field("status").asText()).as(ready.body()).isEqualTo("ready");
            assertThat(ready.field("store").asText()).isEqualTo(name);
            assertThat(ready.field("store_healthy").asBoolean()).isTrue();
            assertThat(ready.field("store_opened").asBoolean()).isTrue();
            assertThat(ready.field("failure_policy").asText()).isEqualTo(policy);
            assertThat(ready.json.has("degraded")).isFalse();
            assertThat(metric("sluice_store_healthy")).isEqualTo(1);
            assertThat(metric("sluice_store_info{failure_policy=\"" + policy + "\",store=\"" + name + "\"}"))
                    .isEqualTo(1);
            JsonNode store = get("/v1/dashboard").field("store");
            assertThat(store.get("name").asText()).isEqualTo(name);
            assertThat(store.get("healthy").asBoolean()).isTrue();
            assertThat(store.get("cause").isNull()).isTrue();
            assertThat(store.get("failure_policy").asText()).isEqualTo(policy);
            assertThat(get("/healthcheck").status).isEqualTo(200);
            await("gRPC health follows", x -> x.grpcHealth("ratelimit") == ServingStatus.SERVING);
        }

        /** One check over HTTP; its 10 s timeout is the hang guard. */
        Answer check(String user) throws IOException, InterruptedException {
            String body = "{\"domain\":\"health\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"" + user
                    + "\"}]}]}";
            return answer(HTTP.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                            .timeout(Duration.ofSeconds(10))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        }

        Answer get(String path) throws IOException, InterruptedException {
            return answer(HTTP.send(
                    HttpRequest.newBuilder(URI.create(base + path))
                            .timeout(Duration.ofSeconds(10))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        }

        private static Answer answer(HttpResponse<String> r) throws IOException {
            boolean json = r.headers().firstValue("Content-Type").orElse("").contains("json");
            return new Answer(
                    r.statusCode(),
                    r.headers(),
                    json ? JSON.readTree(r.body()) : JSON.createObjectNode().put("text", r.body()));
        }

        /** A sample's value in {@code /metrics}, e.g. {@code sluice_store_healthy} or one with its labels. */
        double metric(String sample) throws IOException, InterruptedException {
            return PrometheusSamples.value(get("/metrics").json.get("text").asText(), sample);
        }

        ServingStatus grpcHealth(String service) {
            return HealthGrpc.newBlockingStub(grpc)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.newBuilder().setService(service).build())
                    .getStatus();
        }

        /** Waits until {@code condition} holds, for at most {@link #GUARD}: Redis restarting, a probe a second. */
        void await(String what, Condition condition) {
            Eventually.await(GUARD, what, () -> condition.test(this));
        }

        @Override
        public void close() {
            try {
                grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server.close();
            store.closeResources();
        }
    }

    @FunctionalInterface
    interface Condition {
        boolean test(Service s) throws Exception;
    }
}
