package dev.sluice.gateway;

import static dev.sluice.gateway.Http.as;
import static dev.sluice.gateway.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.gateway.testapp.GatewayTestApp;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The same gateway on a real PostgreSQL ({@code sluice.store: datasource}: the application's DataSource, migrated
 * as the store opens), over HTTP. The database's clock decides, so, as on Redis, only routes too slow to refill
 * during a test are asserted.
 */
@SpringBootTest(
        classes = {GatewayTestApp.class, GatewayOnPostgresTest.Database.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "sluice.store=datasource")
@DirtiesContext // its database is gone after the last test
class GatewayOnPostgresTest {
    private static final Backend BACKEND = Backend.start();
    private static final EmbeddedPostgres POSTGRES = startPostgres();

    @LocalServerPort
    int port;

    @Autowired
    SluiceRateLimiter limiter;

    @TestConfiguration(proxyBeanMethods = false)
    static class Database {
        @Bean
        DataSource dataSource() {
            return POSTGRES.getPostgresDatabase();
        }
    }

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add("backend.uri", BACKEND::uri);
    }

    @AfterAll
    static void stop() throws IOException {
        BACKEND.close();
        POSTGRES.close();
    }

    private static EmbeddedPostgres startPostgres() {
        try {
            return EmbeddedPostgres.builder().start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start embedded PostgreSQL", e);
        }
    }

    @Test
    void postgresDecidesForTheGateway() {
        assertThat(limiter.getStore()).isInstanceOf(FailSafeRateLimiter.class);
        FailSafeRateLimiter store = (FailSafeRateLimiter) limiter.getStore();
        assertThat(store.storeHealthy())
                .as("opened and migrated while the context started")
                .isTrue();

        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = as("alice", port, "/sluice/pg");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(header(r, "X-RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
            assertThat(header(r, "RateLimit-Policy")).isEqualTo("\"sluice-words\";q=3;w=86400");
        }
        HttpResponse<String> denied = as("alice", port, "/sluice/pg");
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(header(denied, "Retry-After"))).isBetween(28_800L - 600, 28_800L);
        assertThat(as("bob", port, "/sluice/pg").statusCode())
                .as("another key, another bucket")
                .isEqualTo(200);
        assertThat(BACKEND.hits("/sluice/pg")).isEqualTo(4);

        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> r = as("carol", port, "/slow/pg");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(Long.parseLong(header(r, "X-RateLimit-Remaining")) / 1200)
                    .isEqualTo(3 - i);
        }
        assertThat(as("carol", port, "/slow/pg").statusCode()).isEqualTo(429);
        assertThat(BACKEND.hits("/slow/pg")).isEqualTo(3);

        for (Degradation cause : Degradation.values()) {
            assertThat(store.degradedCount(cause))
                    .as("a healthy PostgreSQL: %s", cause)
                    .isZero();
        }
    }
}
