package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.UInt64Value;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * envoy's stream-done flow over real gRPC, with the messages Envoy's rate-limit filter builds for a route whose
 * {@code rate_limits} are applied at the request's start with {@code hits_addend: {number: 0}} (or the estimate) and
 * again with {@code apply_on_stream_done: true} and {@code hits_addend} = the actual cost: one descriptor per
 * {@code rate_limits} entry, its {@code hits_addend} set on the descriptor ({@code UInt64Value}), the request's own
 * left at 0. Both semantics: domain {@code llm} counts as envoy, {@code llm-strict} strictly
 * ({@code sluice-stream-done.yaml}).
 */
class EnvoyStreamDoneTest {
    private TestServer s;
    private ManagedChannel channel;
    private RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    @BeforeEach
    void start() {
        s = TestServer.start("sluice-stream-done.yaml");
        channel = NettyChannelBuilder.forAddress(
                        "127.0.0.1", s.server.grpcAddress().getPort())
                .usePlaintext()
                .build();
        rls = RateLimitServiceGrpc.newBlockingStub(channel);
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        s.close();
    }

    /** What Envoy sends: one descriptor with its own {@code hits_addend}, the request's left unset (0). */
    private RateLimitResponse envoy(String domain, long hitsAddend, String... entries) {
        RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder().setHitsAddend(UInt64Value.of(hitsAddend));
        for (String kv : entries) {
            String[] p = kv.split("=", 2);
            d.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(p[0]).setValue(p[1]));
        }
        RateLimitRequest request = RateLimitRequest.newBuilder()
                .setDomain(domain)
                .addDescriptors(d)
                .build();
        return rls.withDeadlineAfter(30, TimeUnit.SECONDS).shouldRateLimit(request);
    }

    private static void assertAnswer(RateLimitResponse r, Code code, long remaining) {
        assertThat(r.getOverallCode()).as("%s", r).isEqualTo(code);
        assertThat(r.getStatuses(0).getCode()).isEqualTo(code);
        assertThat(r.getStatuses(0).getLimitRemaining()).as("%s", r).isEqualTo(remaining);
    }

    @ParameterizedTest
    @ValueSource(strings = {"llm", "llm-strict"})
    void theStreamEndsCostIsChargedInFullPastTheLimit(String domain) {
        // token bucket of 1000 a minute: a token every 60 ms
        assertAnswer(envoy(domain, 0, "api_key=k1"), Code.OK, 1000); // the request's start: a check
        assertAnswer(envoy(domain, 900, "api_key=k1"), Code.OK, 100); // its stream ends: 900 tokens used
        assertAnswer(envoy(domain, 0, "api_key=k1"), Code.OK, 100);
        // 700 more than the 100 left: the work is done, so all of it counts (Envoy ignores this answer)
        assertAnswer(envoy(domain, 700, "api_key=k1"), Code.OK, 0);
        assertAnswer(envoy(domain, 0, "api_key=k1"), Code.OVER_LIMIT, 0);
        // 600 tokens of debt: the next token is whole after 601 × 60 ms, not before
        s.clock().advance(Duration.ofMillis(36_059));
        assertAnswer(envoy(domain, 0, "api_key=k1"), Code.OVER_LIMIT, 0);
        s.clock().advance(Duration.ofMillis(1));
        assertAnswer(envoy(domain, 0, "api_key=k1"), Code.OK, 1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"llm", "llm-strict"})
    void aFixedWindowIsChargedPastItsLimitUntilItEnds(String domain) {
        assertAnswer(envoy(domain, 900, "tenant=t1"), Code.OK, 100);
        assertAnswer(envoy(domain, 700, "tenant=t1"), Code.OK, 0);
        assertAnswer(envoy(domain, 0, "tenant=t1"), Code.OVER_LIMIT, 0);
        assertAnswer(envoy(domain, 1, "api_key=other"), Code.OK, 999); // another key is its own
        s.clock().advance(Duration.ofMinutes(1));
        assertAnswer(envoy(domain, 0, "tenant=t1"), Code.OK, 1000);
    }

    @ParameterizedTest
    @ValueSource(strings = {"llm", "llm-strict"})
    void anEstimateIsReservedAtTheStartAndSettledAtTheStreamEnd(String domain) {
        // Envoy's request_headers action puts x-request-id last, as entry request_id: no part of the limit's key
        assertAnswer(envoy(domain, 500, "user=u1", "request_id=r1"), Code.OK, 500); // start: estimate 500
        assertAnswer(envoy(domain, 200, "user=u1", "request_id=r1"), Code.OK, 800); // end: 200 used, 300 back
        assertAnswer(envoy(domain, 0, "user=u1"), Code.OK, 800);
        // an estimate that does not fit is denied and takes nothing
        assertAnswer(envoy(domain, 900, "user=u1", "request_id=r2"), Code.OVER_LIMIT, 0);
        assertAnswer(envoy(domain, 0, "user=u1"), Code.OK, 800);
        // an actual cost above the estimate is charged in full, into debt
        assertAnswer(envoy(domain, 100, "user=u1", "request_id=r3"), Code.OK, 700);
        assertAnswer(envoy(domain, 1000, "user=u1", "request_id=r3"), Code.OK, 0);
        assertAnswer(envoy(domain, 0, "user=u1"), Code.OVER_LIMIT, 0);
        s.clock().advance(Duration.ofMillis(201 * 60 - 1)); // 200 tokens of debt
        assertAnswer(envoy(domain, 0, "user=u1"), Code.OVER_LIMIT, 0);
        s.clock().advance(Duration.ofMillis(1));
        assertAnswer(envoy(domain, 0, "user=u1"), Code.OK, 1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"llm", "llm-strict"})
    void aStreamEndOfNothingGivesTheEstimateBackAndALateOneIsANewStart(String domain) {
        assertAnswer(envoy(domain, 600, "team=a", "request_id=r1"), Code.OK, 400);
        assertAnswer(envoy(domain, 0, "team=a", "request_id=r1"), Code.OK, 1000); // nothing used: all back
        assertAnswer(envoy(domain, 0, "team=a", "request_id=r1"), Code.OK, 1000); // settled once: a check now
        assertAnswer(envoy(domain, 0, "team=a"), Code.OK, 1000); // without an id: the same limit's state
        assertAnswer(envoy(domain, 600, "team=a", "request_id=r2"), Code.OK, 400);
        // the rule's settle_within (default 15 min) passes: the estimate stood, and a stream end this late finds
        // nothing pending, so it is taken for a new request's start and reserves its hits
        s.clock().advance(Duration.ofMinutes(15));
        assertAnswer(envoy(domain, 300, "team=a", "request_id=r2"), Code.OK, 700);
        assertAnswer(envoy(domain, 300, "team=a", "request_id=r2"), Code.OK, 700); // and its "end" settles that
    }

    private long stat(String domain, String key, String name) {
        return s.server
                .service()
                .metrics()
                .envoyStats()
                .total("ratelimit.service.rate_limit." + domain + "." + key + "." + name);
    }

    private void assertStats(String domain, String key, long total, long over, long near, long within) {
        assertThat(new long[] {
                    stat(domain, key, "total_hits"),
                    stat(domain, key, "over_limit"),
                    stat(domain, key, "near_limit"),
                    stat(domain, key, "within_limit")
                })
                .as("%s.%s: total_hits, over_limit, near_limit, within_limit", domain, key)
                .containsExactly(total, over, near, within);
    }

    /**
     * envoy's stats count each call's {@code hits_addend}, the stream end's too, as envoy's service does (its
     * {@code base_limiter.go} adds every descriptor's hits to {@code total_hits}, then sorts them within, near (past
     * 800 of 1000) or over the limit by the count before and after them); Sluice's metrics count the estimates and
     * the settles.
     */
    @ParameterizedTest
    @ValueSource(strings = {"llm", "llm-strict"})
    void theStreamDoneFlowCountsItsHitsInEnvoysStatsAndItsStepsInTheMetrics(String domain) {
        envoy(domain, 0, "api_key=k1"); // a check: nothing counted
        envoy(domain, 900, "api_key=k1"); // 0 -> 900: 800 within and not near, 100 near
        envoy(domain, 700, "api_key=k1"); // 900 -> 1600: 100 near, 600 over (the bucket's debt)
        assertStats(domain, "api_key", 1600, 600, 200, 900);

        envoy(domain, 900, "tenant=t1");
        envoy(domain, 700, "tenant=t1");
        assertStats(domain, "tenant", 1600, 600, 200, 900);

        envoy(domain, 500, "user=u1", "request_id=r1"); // estimate: 0 -> 500
        envoy(domain, 200, "user=u1", "request_id=r1"); // settled at 200: the count ends at 200
        envoy(domain, 900, "user=u1", "request_id=r2"); // denied: 200 -> 1100, 200 near, 100 over
        envoy(domain, 100, "user=u1", "request_id=r3"); // estimate: 200 -> 300
        envoy(domain, 1000, "user=u1", "request_id=r3"); // settled into debt: counted up to the limit
        assertStats(domain, "user", 2700, 100, 400, 1800);

        String m = s.get("/metrics").body();
        String rule = domain + ".user";
        assertThat(StepMetricsHttpTest.sample(
                        m,
                        "sluice_reservations_total{domain=\"" + domain + "\",outcome=\"reserved\",rule=\"" + rule
                                + "\"}"))
                .isEqualTo(2);
        assertThat(StepMetricsHttpTest.sample(
                        m,
                        "sluice_reservations_total{domain=\"" + domain + "\",outcome=\"denied\",rule=\"" + rule
                                + "\"}"))
                .isEqualTo(1);
        assertThat(StepMetricsHttpTest.sample(
                        m,
                        "sluice_settles_total{domain=\"" + domain + "\",outcome=\"gave_back\",rule=\"" + rule + "\"}"))
                .isEqualTo(1);
        assertThat(StepMetricsHttpTest.sample(
                        m,
                        "sluice_settles_total{domain=\"" + domain + "\",outcome=\"charged_more\",rule=\"" + rule
                                + "\"}"))
                .isEqualTo(1);
        assertThat(StepMetricsHttpTest.sample(
                        m,
                        "sluice_settle_adjusted_permits_total{direction=\"charged_more\"," + "domain=\"" + domain
                                + "\",rule=\"" + rule + "\"}"))
                .isEqualTo(900);
        assertThat(StepMetricsHttpTest.sample(
                        m,
                        "sluice_settle_adjusted_permits_total{direction=\"given_back\"," + "domain=\"" + domain
                                + "\",rule=\"" + rule + "\"}"))
                .isEqualTo(300);
    }
}
