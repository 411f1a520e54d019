package dev.sluice.server;

import static dev.sluice.server.GrpcRlsTest.descriptor;
import static dev.sluice.server.GrpcRlsTest.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.config.Semantics;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.stats.EnvoyPrometheus;
import dev.sluice.server.stats.EnvoyStats;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * envoy's global {@code SHADOW_MODE} and {@code QUOTA_MODE} ({@code sluice serve --shadow-mode}, {@code --quota-mode})
 * over real gRPC, as envoy's {@code shouldRateLimitWorker} (src/service/ratelimit.go) applies them: global shadow
 * mode turns an overall OVER_LIMIT into OK (the statuses stay) and counts {@code ratelimit.service.global_shadow_mode};
 * global quota mode makes every descriptor a quota descriptor ({@code isQuotaMode := globalQuotaMode || rule's}), so
 * a request is over only when every descriptor that is not unlimited is over.
 */
class EnvoyGlobalModesTest {
    private static final String GLOBAL_SHADOW = "ratelimit.service.global_shadow_mode";

    private TestServer s;
    private ManagedChannel channel;
    private RateLimitServiceGrpc.RateLimitServiceBlockingStub rls;

    /** envoy's README examples 3 (10 a second per remote_address) and 5 (ldap unlimited, azure 100 a minute). */
    private void serve(boolean shadowMode, boolean quotaMode) {
        s = TestServer.start(
                t -> t.withEnvoy(
                        new EnvoyOptions(Semantics.ENVOY, EnvoyOptions.Headers.NONE, false, shadowMode, quotaMode)),
                "envoy/example3.yaml",
                "envoy/example5.yaml");
        channel = NettyChannelBuilder.forAddress(
                        "127.0.0.1", s.server.grpcAddress().getPort())
                .usePlaintext()
                .build();
        rls = RateLimitServiceGrpc.newBlockingStub(channel);
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (s != null) {
            s.close();
        }
    }

    private RateLimitResponse call(String domain, int hits, String... kvs) {
        io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor[] ds =
                new io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor[kvs.length];
        for (int i = 0; i < kvs.length; i++) {
            ds[i] = descriptor(kvs[i]);
        }
        return rls.withDeadlineAfter(30, TimeUnit.SECONDS).shouldRateLimit(request(domain, hits, ds));
    }

    private EnvoyStats stats() {
        return s.server.service().metrics().envoyStats();
    }

    @Test
    void globalShadowModeAnswersAnOverLimitRequestOkAndCountsIt() {
        serve(true, false);
        RateLimitResponse within = call("edge_proxy_per_ip", 10, "remote_address=10.0.0.1");
        assertThat(within.getOverallCode()).isEqualTo(Code.OK);
        assertThat(within.getStatuses(0).getLimitRemaining()).isZero();
        assertThat(stats().total(GLOBAL_SHADOW)).as("nothing over yet").isZero();

        RateLimitResponse over = call("edge_proxy_per_ip", 1, "remote_address=10.0.0.1");
        assertThat(over.getOverallCode()).as("the overall code is shadowed").isEqualTo(Code.OK);
        assertThat(over.getStatuses(0).getCode())
                .as("the descriptor's status stays as it is")
                .isEqualTo(Code.OVER_LIMIT);
        assertThat(over.getStatuses(0).getLimitRemaining()).isZero();
        assertThat(over.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(10);
        assertThat(stats().total(GLOBAL_SHADOW)).isEqualTo(1);
        assertThat(stats().total("ratelimit.service.rate_limit.edge_proxy_per_ip.remote_address.over_limit"))
                .as("the descriptor's own stats count as without the global mode")
                .isEqualTo(1);

        // POST /json answers the same: 200, not 429, and counts once more
        TestServer.Resp json =
                EnvoyJsonHttpTest.json(s, EnvoyJsonHttpTest.one("edge_proxy_per_ip", "remote_address", "10.0.0.1"));
        assertThat(json.status()).as(json.body()).isEqualTo(200);
        RateLimitResponse parsed = EnvoyJsonHttpTest.parse(json.body());
        assertThat(parsed.getOverallCode()).isEqualTo(Code.OK);
        assertThat(parsed.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
        assertThat(stats().total(GLOBAL_SHADOW)).isEqualTo(2);

        // envoy's default Prometheus mapper has no mapping for it: statsd_exporter's escaped name
        assertThat(EnvoyPrometheus.scrape(stats())).contains("ratelimit_service_global_shadow_mode 2\n");

        // Sluice's own API is strict and envoy has no /v1/check: it does not follow envoy's global modes
        assertThat(s.post(TestServer.check("edge_proxy_per_ip", 10, "remote_address=10.0.0.9"))
                        .status())
                .isEqualTo(200);
        TestServer.Resp check = s.post(TestServer.check("edge_proxy_per_ip", 1, "remote_address=10.0.0.9"));
        assertThat(check.status()).as(check.body()).isEqualTo(429);
        assertThat(stats().total(GLOBAL_SHADOW)).isEqualTo(2);
    }

    @Test
    void withoutGlobalShadowModeTheSameRequestIsOverAndNothingIsCountedGlobally() {
        serve(false, false);
        call("edge_proxy_per_ip", 10, "remote_address=10.0.0.1");
        assertThat(call("edge_proxy_per_ip", 1, "remote_address=10.0.0.1").getOverallCode())
                .isEqualTo(Code.OVER_LIMIT);
        assertThat(stats().total(GLOBAL_SHADOW)).isZero();
    }

    @Test
    void globalQuotaModeMakesARequestOverOnlyWhenEveryDescriptorIsOver() {
        serve(false, true);
        // both over (11 hits on a limit of 10): OVER_LIMIT
        RateLimitResponse both = call("edge_proxy_per_ip", 11, "remote_address=10.0.0.1", "remote_address=10.0.0.2");
        assertThat(both.getStatusesList())
                .extracting(RateLimitResponse.DescriptorStatus::getCode)
                .containsExactly(Code.OVER_LIMIT, Code.OVER_LIMIT);
        assertThat(both.getOverallCode()).isEqualTo(Code.OVER_LIMIT);

        // one of two over: OK overall, the over one's status still OVER_LIMIT (envoy's rule for quota descriptors)
        RateLimitResponse one = call("edge_proxy_per_ip", 1, "remote_address=10.0.0.1", "remote_address=10.0.0.3");
        assertThat(one.getStatusesList())
                .extracting(RateLimitResponse.DescriptorStatus::getCode)
                .containsExactly(Code.OVER_LIMIT, Code.OK);
        assertThat(one.getOverallCode()).isEqualTo(Code.OK);

        // a descriptor no rule matches is a quota descriptor within its limit, as in envoy: OK overall
        assertThat(call("edge_proxy_per_ip", 1, "remote_address=10.0.0.1", "nope=x")
                        .getOverallCode())
                .isEqualTo(Code.OK);
        // an unlimited one is not a quota descriptor: the over one is every quota descriptor, so OVER_LIMIT
        assertThat(call("internal", 101, "azure=a", "ldap=x").getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    }

    @Test
    void withoutGlobalQuotaModeOneDescriptorOverIsEnough() {
        serve(false, false);
        RateLimitResponse one = call("edge_proxy_per_ip", 11, "remote_address=10.0.0.1", "remote_address=10.0.0.3");
        assertThat(one.getStatusesList())
                .extracting(RateLimitResponse.DescriptorStatus::getCode)
                .containsExactly(Code.OVER_LIMIT, Code.OVER_LIMIT);
        RateLimitResponse oneOfTwo = call("edge_proxy_per_ip", 1, "remote_address=10.0.0.1", "remote_address=10.0.0.4");
        assertThat(oneOfTwo.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    }
}
