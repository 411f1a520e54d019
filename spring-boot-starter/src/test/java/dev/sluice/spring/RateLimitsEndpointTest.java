package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisServer;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/** The {@code ratelimits} endpoint without a server: a remote store's health and degraded counts, and the off switch. */
class RateLimitsEndpointTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceEndpointAutoConfiguration.class))
            .withPropertyValues("management.endpoints.web.exposure.include=ratelimits");

    @Test
    @SuppressWarnings("unchecked")
    void aRemoteStoreThatIsDownIsReportedUnhealthyWithItsDegradedDecisions() throws Exception {
        int closedPort = RedisServer.freePort();
        runner.withPropertyValues(
                        "sluice.store=redis://:secret@127.0.0.1:" + closedPort, "sluice.failure-policy=fail_closed")
                .run(ctx -> {
                    ctx.getBean(RateLimiter.class).tryAcquire("k", Limit.tokenBucket(1, Rate.perSecond(1)));
                    Map<String, Object> store = (Map<String, Object>)
                            ctx.getBean(RateLimitsEndpoint.class).rateLimits().get("store");
                    assertThat(store)
                            .containsEntry("kind", "redis")
                            .containsEntry("healthy", false)
                            .containsEntry("failurePolicy", "fail_closed");
                    assertThat((Map<String, Long>) store.get("degradedDecisions"))
                            .containsEntry("unavailable", 1L)
                            .containsEntry("timeout", 0L)
                            .containsKeys("overloaded", "store_error");
                    assertThat(store.toString())
                            .as("the URI's password stays out")
                            .doesNotContain("secret");
                });
    }

    @Test
    void theOffSwitchIsReported() {
        runner.withPropertyValues("sluice.enabled=false")
                .run(ctx -> assertThat(ctx.getBean(RateLimitsEndpoint.class).rateLimits())
                        .isEqualTo(Map.of("enabled", false, "shadowMode", false)));
    }

    @Test
    void noEndpointUnlessExposed() {
        new WebApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(SluiceAutoConfiguration.class, SluiceEndpointAutoConfiguration.class))
                .run(ctx -> assertThat(ctx).doesNotHaveBean(RateLimitsEndpoint.class));
    }
}
