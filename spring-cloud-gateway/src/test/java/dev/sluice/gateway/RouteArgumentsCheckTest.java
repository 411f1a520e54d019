package dev.sluice.gateway;

import static dev.sluice.gateway.Http.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.gateway.testapp.GatewayTestApp;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;

/**
 * A route whose {@code RequestRateLimiter} decides with Sluice but whose arguments are still
 * {@code redis-rate-limiter.*}, in a real gateway: it stops the gateway at startup naming the route and the
 * arguments it needs, as any route whose arguments cannot work does; with Spring Cloud Gateway's
 * {@code fail-on-route-definition-error: false} the gateway starts without it, and its other routes work.
 */
class RouteArgumentsCheckTest {
    private static final Backend BACKEND = Backend.start();
    private static final String ROUTES = "--spring.cloud.gateway.server.webflux.routes";

    @AfterAll
    static void stopBackend() {
        BACKEND.close();
    }

    /** Two routes replacing the test app's: {@code good} (3 at once) and {@code misnamed}, RedisRateLimiter's words. */
    private static ConfigurableApplicationContext start(String... more) {
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--backend.uri=" + BACKEND.uri(),
                ROUTES + "[0].id=good",
                ROUTES + "[0].uri=" + BACKEND.uri(),
                ROUTES + "[0].predicates[0]=Path=/good/**",
                ROUTES + "[0].filters[0].name=RequestRateLimiter",
                ROUTES + "[0].filters[0].args[sluice-rate-limiter.replenishRate]=1",
                ROUTES + "[0].filters[0].args[sluice-rate-limiter.burstCapacity]=3600",
                ROUTES + "[0].filters[0].args[sluice-rate-limiter.requestedTokens]=1200",
                ROUTES + "[1].id=misnamed",
                ROUTES + "[1].uri=" + BACKEND.uri(),
                ROUTES + "[1].predicates[0]=Path=/misnamed/**",
                ROUTES + "[1].filters[0].name=RequestRateLimiter",
                ROUTES + "[1].filters[0].args[rate-limiter]=#{@sluiceRateLimiter}",
                ROUTES + "[1].filters[0].args[redis-rate-limiter.replenishRate]=1",
                ROUTES + "[1].filters[0].args[redis-rate-limiter.burstCapacity]=5"));
        args.addAll(List.of(more));
        return new SpringApplicationBuilder(GatewayTestApp.class).run(args.toArray(String[]::new));
    }

    @Test
    void aRouteWithoutItsArgumentsStopsTheGatewayNamingThem() {
        Throwable failure = catchThrowable(RouteArgumentsCheckTest::start);
        assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("route 'misnamed': its RequestRateLimiter decides with Sluice but it has no"
                        + " sluice-rate-limiter.* arguments (it has redis-rate-limiter.burstCapacity,"
                        + " redis-rate-limiter.replenishRate, another rate limiter's"); // SluiceRateLimiterTest: all
    }

    @Test
    void failOnRouteDefinitionErrorFalseLeavesTheRouteOutAndKeepsTheGatewayWorking() {
        try (ConfigurableApplicationContext gateway =
                start("--spring.cloud.gateway.server.webflux.fail-on-route-definition-error=false")) {
            int port = Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
            assertThat(gateway.getBean(RequestRateLimiterGatewayFilterFactory.class)
                            .name())
                    .isEqualTo("RequestRateLimiter");
            assertThat(as("alice", port, "/misnamed/a").statusCode())
                    .as("left out: no route")
                    .isEqualTo(404);
            for (int i = 0; i < 3; i++) {
                assertThat(as("alice", port, "/good/a").statusCode()).isEqualTo(200);
            }
            assertThat(as("alice", port, "/good/a").statusCode()).isEqualTo(429);
            assertThat(BACKEND.hits("/misnamed/a")).isZero();
            assertThat(BACKEND.hits("/good/a")).isEqualTo(3);
        }
    }
}
