package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.redis.RedisServer;
import dev.sluice.server.SluiceServer;
import dev.sluice.server.config.RuleSet;
import dev.sluice.tck.Eventually;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The service on the Redis and PostgreSQL stores, opened exactly as {@code --store redis://…} and
 * {@code --store postgresql://…} open them (after {@code sluice migrate}), over real HTTP and gRPC. The stores'
 * own conformance suites prove their decisions; this proves the service drives them.
 */
class RemoteStoresEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String RULES = """
            domain: e2e
            descriptors:
              - key: user
                rate_limit:
                  algorithm: token_bucket
                  unit: minute
                  requests_per_unit: 3
              - key: ip
                rate_limit:
                  window: 90s
                  requests_per_unit: 2
              - key: burst
                rate_limit:
                  algorithm: token_bucket
                  unit: hour
                  requests_per_unit: 25
            """;

    @Test
    void redisStore() throws Exception {
        try (RedisServer redis = RedisServer.start(); // on another port if another process takes its first
                Stores.Opened store = Stores.open(
                        redis.uri(), 1, Stores.Budget.of(Duration.ofSeconds(2)), 1, FailurePolicy.FAIL_CLOSED)) {
            assertThat(store.name()).isEqualTo("redis");
            exercise(store);
        }
    }

    @Test
    void postgresStore() throws Exception {
        try (EmbeddedPostgres pg =
                EmbeddedPostgres.builder().setServerConfig("fsync", "off").start()) {
            String uri = "postgresql://postgres@localhost:" + pg.getPort() + "/postgres";
            assertThat(SluiceCommand.commandLine().execute("migrate", "--store", uri))
                    .isZero();
            assertThat(SluiceCommand.commandLine().execute("migrate", "--store", uri))
                    .as("idempotent")
                    .isZero();
            try (Stores.Opened store =
                    Stores.open(uri, 1, Stores.Budget.of(Duration.ofSeconds(2)), 4, FailurePolicy.FAIL_CLOSED)) {
                assertThat(store.name()).isEqualTo("postgres");
                expiredRowsAreDeleted(store, pg); // before exercise(), whose server closes the store
                exercise(store);
            }
        }
    }

    @Test
    void aDatabaseWithoutTheSchemaGetsItAtStartAndTheLogSaysSo() throws Exception {
        ch.qos.logback.classic.Logger storesLog =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(Stores.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        storesLog.addAppender(logged);
        try (EmbeddedPostgres pg =
                EmbeddedPostgres.builder().setServerConfig("fsync", "off").start()) {
            String uri = "postgresql://postgres@localhost:" + pg.getPort() + "/postgres";
            try (Stores.Opened store =
                    Stores.open(uri, 1, Stores.Budget.of(Duration.ofSeconds(2)), 4, FailurePolicy.FAIL_CLOSED)) {
                assertThat(store.limiter()
                                .tryAcquire("k", Limit.tokenBucket(1, Rate.perHour(1)))
                                .allowed())
                        .as("decided by the store on the tables serve created")
                        .isTrue();
                assertThat(store.limiter()
                                .tryAcquire("k", Limit.tokenBucket(1, Rate.perHour(1)))
                                .allowed())
                        .isFalse();
            }
            try (Stores.Opened again =
                    Stores.open(uri, 1, Stores.Budget.of(Duration.ofSeconds(2)), 4, FailurePolicy.FAIL_CLOSED)) {
                assertThat(again.name()).isEqualTo("postgres");
            }
        } finally {
            storesLog.detachAppender(logged);
        }
        List<String> created = logged.list.stream()
                .map(e ->
                        e.getKeyValuePairs() == null ? "" : e.getKeyValuePairs().toString())
                .filter(kv -> kv.contains("event=\"schema_created\""))
                .toList();
        assertThat(created)
                .as("one line when the tables were created, none when they were there")
                .singleElement()
                .asString()
                .contains("schema=\"public\"")
                .contains("prefix=\"sluice_\"")
                .contains("created them");
    }

    /** The service runs the expiry cleaner: a key back to a fresh state leaves the table without being asked. */
    private static void expiredRowsAreDeleted(Stores.Opened store, EmbeddedPostgres pg) throws Exception {
        String key = "expiring:" + UUID.randomUUID();
        assertThat(store.limiter()
                        .tryAcquire(key, Limit.tokenBucket(1, Rate.of(1, Duration.ofMillis(1))))
                        .allowed())
                .isTrue();
        try (java.sql.Connection c = pg.getPostgresDatabase().getConnection();
                java.sql.PreparedStatement count =
                        c.prepareStatement("select count(*) from sluice_bucket where key = ?")) {
            count.setString(1, key);
            long rows = rows(count);
            assertThat(rows).as("the row exists after the decision").isEqualTo(1);
            // serve's cleaner runs on the system scheduler (ExpiryCleanerTest steps one on a manual one)
            Eventually.await(
                    Stores.CLEANER_INTERVAL.multipliedBy(6),
                    "no row of the expired key left after six cleaner intervals",
                    () -> rows(count) == 0);
        }
    }

    private static long rows(java.sql.PreparedStatement count) throws java.sql.SQLException {
        try (java.sql.ResultSet r = count.executeQuery()) {
            r.next();
            return r.getLong(1);
        }
    }

    private static void exercise(Stores.Opened store) throws Exception {
        SluiceServer.Settings s = SluiceServer.Settings.defaults(store.limiter(), RuleSet.parse("e2e.yaml", RULES))
                .withStore(store.limiter(), store.name(), Duration.ofSeconds(2));
        try (SluiceServer server = SluiceServer.start(s)) {
            String base = "http://127.0.0.1:" + server.httpAddress().getPort();
            String user = UUID.randomUUID().toString();
            for (int remaining = 2; remaining >= 0; remaining--) {
                HttpResponse<String> r = post(
                        base,
                        "{\"domain\":\"e2e\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"" + user
                                + "\"}]}]}");
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                assertThat(JSON.readTree(r.body())
                                .get("statuses")
                                .get(0)
                                .get("remaining")
                                .asLong())
                        .isEqualTo(remaining);
            }
            HttpResponse<String> over = post(
                    base,
                    "{\"domain\":\"e2e\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"" + user
                            + "\"}]}]}");
            assertThat(over.statusCode()).isEqualTo(429);
            JsonNode st = JSON.readTree(over.body()).get("statuses").get(0);
            assertThat(st.get("retry_after_ns").asLong()).isBetween(1L, 20_000_000_000L);
            assertThat(over.headers().firstValue("Retry-After")).isPresent();

            // all or nothing across two descriptors, on the store
            String ip = UUID.randomUUID().toString();
            String both = "{\"domain\":\"e2e\",\"hits\":2,\"descriptors\":[{\"entries\":[{\"key\":\"ip\",\"value\":\""
                    + ip + "\"}]},{\"entries\":[{\"key\":\"user\",\"value\":\"" + ip + "\"}]}]}";
            assertThat(post(base, both).statusCode()).isEqualTo(200);
            assertThat(post(base, both).statusCode()).isEqualTo(429);
            HttpResponse<String> userAlone = post(
                    base,
                    "{\"domain\":\"e2e\",\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"" + ip
                            + "\"}]}]}");
            assertThat(JSON.readTree(userAlone.body())
                            .get("statuses")
                            .get(0)
                            .get("remaining")
                            .asLong())
                    .as("the denied pair took nothing")
                    .isZero();

            HttpResponse<String> ready = HTTP.send(
                    HttpRequest.newBuilder(URI.create(base + "/readyz")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(ready.body()).contains(store.name());

            // 80 requests at once on one key of 25 per hour, over HTTP (strict semantics) and gRPC (envoy's): decided
            // asynchronously on the store, concurrently, and never more than 25 answered OK on either
            String hot = UUID.randomUUID().toString();
            List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> many = new java.util.ArrayList<>();
            for (int i = 0; i < 80; i++) {
                many.add(HTTP.sendAsync(
                        HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                                .timeout(Duration.ofSeconds(20))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(
                                        "{\"domain\":\"e2e\",\"descriptors\":[{\"entries\":[{\"key\":\"burst\",\"value\":\""
                                                + hot + "\"}]}]}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            long httpOk = 0;
            for (var f : many) {
                int code = f.get(30, TimeUnit.SECONDS).statusCode();
                assertThat(code).isIn(200, 429);
                httpOk += code == 200 ? 1 : 0;
            }
            assertThat(httpOk).as("HTTP answers OK on a limit of 25").isEqualTo(25);

            // the same with three descriptors a request, strict: one all-or-nothing store call each, so exactly 25 are
            // admitted on all three keys, and every denial names all three (they move together) as OVER_LIMIT
            String three = "{\"domain\":\"e2e\",\"descriptors\":["
                    + String.join(
                            ",",
                            List.of("a", "b", "c").stream()
                                    .map(k -> "{\"entries\":[{\"key\":\"burst\",\"value\":\"" + hot + "-" + k + "\"}]}")
                                    .toList())
                    + "]}";
            List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> triples = new java.util.ArrayList<>();
            for (int i = 0; i < 80; i++) {
                triples.add(HTTP.sendAsync(
                        HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                                .timeout(Duration.ofSeconds(20))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(three))
                                .build(),
                        HttpResponse.BodyHandlers.ofString()));
            }
            long tripleOk = 0;
            for (var f : triples) {
                HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
                assertThat(r.statusCode()).as(r.body()).isIn(200, 429);
                tripleOk += r.statusCode() == 200 ? 1 : 0;
                if (r.statusCode() == 429) {
                    for (JsonNode status : JSON.readTree(r.body()).get("statuses")) {
                        assertThat(status.get("code").asText()).as(r.body()).isEqualTo("OVER_LIMIT");
                        assertThat(status.get("remaining").asLong())
                                .as(r.body())
                                .isZero();
                    }
                }
            }
            assertThat(tripleOk).as("HTTP answers OK on three limits of 25").isEqualTo(25);

            ManagedChannel ch = NettyChannelBuilder.forAddress(
                            "127.0.0.1", server.grpcAddress().getPort())
                    .usePlaintext()
                    .build();
            try {
                var stub = RateLimitServiceGrpc.newFutureStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS);
                List<com.google.common.util.concurrent.ListenableFuture<RateLimitResponse>> calls =
                        new java.util.ArrayList<>();
                for (int i = 0; i < 80; i++) {
                    calls.add(stub.shouldRateLimit(RateLimitRequest.newBuilder()
                            .setDomain("e2e")
                            .addDescriptors(RateLimitDescriptor.newBuilder()
                                    .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                            .setKey("burst")
                                            .setValue("grpc-" + hot)))
                            .build()));
                }
                long grpcOk = 0;
                for (var f : calls) {
                    grpcOk += f.get(30, TimeUnit.SECONDS).getOverallCode() == RateLimitResponse.Code.OK ? 1 : 0;
                }
                assertThat(grpcOk).as("gRPC answers OK on a limit of 25").isEqualTo(25);

                RateLimitResponse g = RateLimitServiceGrpc.newBlockingStub(ch)
                        .withDeadlineAfter(20, TimeUnit.SECONDS)
                        .shouldRateLimit(RateLimitRequest.newBuilder()
                                .setDomain("e2e")
                                .addDescriptors(RateLimitDescriptor.newBuilder()
                                        .addEntries(RateLimitDescriptor.Entry.newBuilder()
                                                .setKey("user")
                                                .setValue("grpc-" + user)))
                                .build());
                assertThat(g.getOverallCode()).isEqualTo(RateLimitResponse.Code.OK);
                assertThat(g.getStatuses(0).getLimitRemaining()).isEqualTo(2);
            } finally {
                ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
    }

    private static HttpResponse<String> post(String base, String body) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/check"))
                        .timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
