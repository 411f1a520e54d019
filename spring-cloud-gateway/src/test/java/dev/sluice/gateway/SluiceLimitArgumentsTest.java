package dev.sluice.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.gateway.SluiceLimitGatewayFilterFactory.Config;
import dev.sluice.gateway.SluiceLimitGatewayFilterFactory.Route;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code SluiceLimit}'s arguments are checked when the route loads, each error naming the route and the fix. */
class SluiceLimitArgumentsTest {

    private static Config route() {
        Config c = new Config();
        c.setRouteId("llm");
        return c;
    }

    @Test
    void aRouteThatLimitsNothingFailsNamingWhatToGive() {
        assertThatThrownBy(() -> Route.of(route()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("route 'llm': SluiceLimit's arguments limit nothing: give max-in-flight, or"
                        + " requests_per_unit, unit and estimate (a cost known afterwards), or both");
    }

    @Test
    void badArgumentsFailNamingTheArgument() {
        assertThatThrownBy(() -> Route.of(route().setMaxInFlight(0L)))
                .hasMessage("route 'llm': SluiceLimit's max-in-flight 0 must be at least 1");
        assertThatThrownBy(() -> Route.of(route().setRequestsPerUnit(1000L).setUnit("minute")))
                .hasMessageStartingWith("route 'llm': SluiceLimit's estimate is missing");
        assertThatThrownBy(() -> Route.of(route().setEstimate(10L).setMaxInFlight(1L)))
                .hasMessageStartingWith("route 'llm': SluiceLimit's estimate/cost-header need a limit");
        assertThatThrownBy(() -> Route.of(
                        route().setRequestsPerUnit(100L).setUnit("minute").setEstimate(500L)))
                .hasMessageStartingWith("route 'llm': SluiceLimit's cost 500 exceeds capacity 100");
        assertThatThrownBy(() -> Route.of(route().setMaxInFlight(1L).setInFlightLease(Duration.ZERO)))
                .hasMessageStartingWith("route 'llm': SluiceLimit's in-flight-lease PT0S is out of range");
    }

    @Test
    void aGoodRouteKeepsItsArguments() {
        Route r = Route.of(route().setMaxInFlight(2L)
                .setRequestsPerUnit(1000L)
                .setUnit("minute")
                .setAlgorithm("token_bucket")
                .setEstimate(100L)
                .setCostHeader("X-Tokens-Used"));
        assertThat(r.maxInFlight()).isEqualTo(2);
        assertThat(r.estimate()).isEqualTo(100);
        assertThat(r.costHeader()).isEqualTo("X-Tokens-Used");
        assertThat(r.lease()).isEqualTo(Duration.ofMinutes(10));
        assertThat(r.limit()).isNotNull();
        assertThat(r.limit().capacity()).isEqualTo(1000);
    }
}
