package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics;
import dev.sluice.server.envoy.EnvoyOptions;
import dev.sluice.server.envoy.RlsService;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * envoy's {@code GET /healthcheck} (src/server/health.go): {@code OK} while serving; 500 with an empty body once the
 * service is shutting down, as envoy's health checker fails on SIGTERM so that load balancers stop sending to it.
 */
class HealthcheckTest {

    @Test
    void okWhileServingAnd500OnceDraining() throws Exception {
        try (InMemoryRateLimiter limiter = InMemoryRateLimiter.builder().build()) {
            DecisionService service = new DecisionService(
                    limiter,
                    "memory",
                    RuleSet.parse(
                            "test",
                            "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n"),
                    250_000_000L,
                    64,
                    new ServerMetrics());
            HttpApiHandler handler = new HttpApiHandler(service, new RlsService(service, EnvoyOptions.defaults()), "t");
            EmbeddedChannel ch = new EmbeddedChannel(handler);

            ch.writeInbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/healthcheck"));
            FullHttpResponse ok = ch.readOutbound();
            assertThat(ok.status().code()).as("no token needed").isEqualTo(200);
            assertThat(ok.content().toString(StandardCharsets.UTF_8)).isEqualTo("OK");
            ok.release();

            handler.draining(true);
            ch.writeInbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/healthcheck"));
            FullHttpResponse failing = ch.readOutbound();
            assertThat(failing.status().code()).isEqualTo(500);
            assertThat(failing.content().readableBytes()).isZero();
            failing.release();
            ch.finishAndReleaseAll();
        }
    }
}
