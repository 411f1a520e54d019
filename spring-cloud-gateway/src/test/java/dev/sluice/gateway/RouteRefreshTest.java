package dev.sluice.gateway;

import static dev.sluice.gateway.Http.as;
import static dev.sluice.gateway.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import dev.sluice.gateway.testapp.GatewayTestApp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.context.refresh.ContextRefresher;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Issue 29: a route's limit changed in the gateway's configuration and refreshed as an operator does (Spring Cloud's
 * {@code ContextRefresher.refresh()}, what {@code /actuator/refresh} runs: the properties are rebound, the routes
 * reloaded by a {@code RefreshRoutesEvent} and the filter's arguments bound again), over real HTTP on a frozen clock:
 * each key keeps what it spent under the route's new numbers.
 */
@SpringBootTest(
        classes = {GatewayTestApp.class, RouteRefreshTest.FrozenClock.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        // on the command line, which a refresh reads again (it does not read the test's own properties)
        args = "--spring.config.import=optional:file:" + RouteRefreshTest.FILE)
class RouteRefreshTest {
    /** The gateway's refreshable routes (relative to the module, where the tests run). */
    static final String FILE = "target/route-refresh-test/routes.properties";

    private static final Backend BACKEND = Backend.start();

    static {
        write(5); // before the gateway starts: the route of the start
    }

    @LocalServerPort
    int port;

    @Autowired
    ContextRefresher refresher;

    @TestConfiguration(proxyBeanMethods = false)
    static class FrozenClock {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2025-01-01T00:00:00Z"));
        }
    }

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add("backend.uri", BACKEND::uri);
    }

    @AfterAll
    static void stopBackend() {
        BACKEND.close();
    }

    /** The file's routes replace application.yml's: one, {@code refreshed}, a fixed window of {@code perDay}. */
    private static void write(long perDay) {
        String route = "spring.cloud.gateway.server.webflux.routes[0].";
        String args = route + "filters[0].args.";
        String text = route + "id=refreshed\n"
                + route + "uri=${backend.uri}\n"
                + route + "predicates[0]=Path=/refreshed/**\n"
                + route + "filters[0].name=RequestRateLimiter\n"
                + args + "rate-limiter=#{@sluiceRateLimiter}\n"
                + args + "key-resolver=#{@userKeyResolver}\n"
                + args + "sluice-rate-limiter.requests_per_unit=" + perDay + "\n"
                + args + "sluice-rate-limiter.unit=day\n";
        try {
            Path p = Path.of(FILE);
            Files.createDirectories(p.getParent());
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** How many requests of {@code user} pass before the first 429 (at most 20). */
    private int admitted(String user) {
        int n = 0;
        while (n < 20 && as(user, port, "/refreshed/a").statusCode() == 200) {
            n++;
        }
        return n;
    }

    @Test
    void aRouteTightenedAndLoosenedByARefreshKeepsWhatEachKeySpent() {
        assertThat(admitted("alice")).as("5 a day").isEqualTo(5);

        write(3);
        assertThat(refresher.refresh())
                .contains("spring.cloud.gateway.server.webflux.routes[0].filters[0].args"
                        + ".sluice-rate-limiter.requests_per_unit");
        HttpResponse<String> denied = as("alice", port, "/refreshed/a");
        assertThat(denied.statusCode())
                .as("5 spent, 3 allowed now: no fresh burst")
                .isEqualTo(429);
        assertThat(header(denied, "RateLimit-Policy")).isEqualTo("\"refreshed\";q=3;w=86400");
        assertThat(admitted("bob")).as("a new key, under the new numbers").isEqualTo(3);

        write(8);
        assertThat(refresher.refresh()).isNotEmpty();
        assertThat(admitted("alice")).as("8 allowed, 5 spent").isEqualTo(3);
        assertThat(admitted("bob")).as("8 allowed, 3 spent").isEqualTo(5);
    }
}
