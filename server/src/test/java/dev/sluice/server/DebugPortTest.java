package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** envoy's debug port: the rules as envoy's {@code Dump()} prints them, the stats, the health, the endpoint list. */
class DebugPortTest {
    private static final String RULES = """
            domain: d
            descriptors:
              - key: k
                value: v
                rate_limit:
                  unit: minute
                  requests_per_unit: 20
                descriptors:
                  - key: sub
                    shadow_mode: true
                    rate_limit:
                      unit: hour
                      requests_per_unit: 3
              - key: free
                rate_limit:
                  unlimited: true
              - key: q
                quota_mode: true
                rate_limit:
                  unit: day
                  requests_per_unit: 5
            """;

    @Test
    void rlconfigPrintsEachRuleAsEnvoysDump() throws Exception {
        assertThat(DebugPort.rlconfig(RuleSet.parse("d.yaml", RULES))).isEqualTo("""
                        d.k_v: unit=MINUTE requests_per_unit=20, shadow_mode: false, quota_mode: false
                        d.k_v.sub: unit=HOUR requests_per_unit=3, shadow_mode: true, quota_mode: false
                        d.free: unit=UNKNOWN requests_per_unit=0, shadow_mode: false, quota_mode: false
                        d.q: unit=DAY requests_per_unit=5, shadow_mode: false, quota_mode: true
                        """);
    }

    @Test
    void statsAreEnvoysNamesOfTheDecisionsCounted() {
        ServerMetrics m = new ServerMetrics();
        // a limit of 5 (near from 4): 2 hits, then 4 more that pass it by 1; a shadow rule's hit over its limit of 0
        m.envoyStats().counted("d.k_v", false, 5, 2, 0, 2);
        m.envoyStats().counted("d.k_v", false, 5, 4, 2, 6);
        m.envoyStats().counted("d.k_v.sub", true, 0, 1, 0, 1);
        assertThat(DebugPort.stats(m)).isEqualTo("""
                        ratelimit.service.rate_limit.d.k_v.near_limit: 1
                        ratelimit.service.rate_limit.d.k_v.over_limit: 1
                        ratelimit.service.rate_limit.d.k_v.sub.over_limit: 1
                        ratelimit.service.rate_limit.d.k_v.sub.shadow_mode: 1
                        ratelimit.service.rate_limit.d.k_v.sub.total_hits: 1
                        ratelimit.service.rate_limit.d.k_v.total_hits: 6
                        ratelimit.service.rate_limit.d.k_v.within_limit: 2
                        """);
    }

    @Test
    void thePortAnswersGetsInPlainTextAndRefusesTheRest() throws Exception {
        try (InMemoryRateLimiter limiter = InMemoryRateLimiter.create()) {
            DecisionService service = new DecisionService(
                    limiter, "memory", RuleSet.parse("d.yaml", RULES), 250_000_000L, 64, new ServerMetrics());
            try (DebugPort port =
                    DebugPort.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), service)) {
                String base = "http://127.0.0.1:" + port.address().getPort();
                HttpResponse<String> rl = get(base + "/rlconfig", "GET");
                assertThat(rl.statusCode()).isEqualTo(200);
                assertThat(rl.headers().firstValue("Content-Type")).contains("text/plain; charset=utf-8");
                assertThat(rl.body()).startsWith("d.k_v: unit=MINUTE");
                assertThat(get(base + "/healthcheck", "GET").body()).isEqualTo("OK");
                assertThat(get(base + "/", "GET").body()).isEqualTo("""
                                /healthcheck: OK while the service and its store are healthy, else 500
                                /rlconfig: print out the currently loaded configuration for debugging
                                /stats: print out stats
                                """);
                assertThat(get(base + "/debug/pprof/", "GET").statusCode()).isEqualTo(404);
                assertThat(get(base + "/rlconfig", "DELETE").statusCode()).isEqualTo(405);
            }
        }
    }

    private static HttpResponse<String> get(String url, String method) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(url))
                                .timeout(Duration.ofSeconds(20))
                                .method(method, HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }
}
