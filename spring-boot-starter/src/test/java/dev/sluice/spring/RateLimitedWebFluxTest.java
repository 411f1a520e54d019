package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.spring.fluxapp.FluxApp;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.reactive.context.ReactiveWebApplicationContext;
import org.springframework.context.ApplicationContext;

/**
 * {@link RateLimited} in a reactive application (WebFlux, here on Tomcat), over real HTTP: a Mono, a Flux and a
 * future over the limit are answered 429 with the same headers and body as in Spring MVC, and no servlet filter is
 * registered.
 */
@SpringBootTest(
        classes = FluxApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.main.web-application-type=reactive",
            "sluice.limits.reports.requests_per_unit=2",
            "sluice.limits.reports.unit=minute"
        })
class RateLimitedWebFluxTest {
    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    private void assertDeniedAfterTwo(String path, String allowedBody) {
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> ok = Http.get(port, path);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo(allowedBody);
        }
        HttpResponse<String> denied = Http.get(port, path);
        assertThat(denied.statusCode()).isEqualTo(429);
        assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"reports\";q=2;w=60");
        assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"reports\";r=0;t=60");
        assertThat(denied.body())
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\",\"status\":429,"
                        + "\"detail\":\"Rate limit 'reports' exceeded: retry in 60 s.\",\"instance\":\"" + path + "\","
                        + "\"limit\":\"reports\",\"retryAfterSeconds\":60}");
    }

    @Test
    void aMonoOverTheLimitIsAnswered429() {
        assertThat(context).isInstanceOf(ReactiveWebApplicationContext.class);
        assertThat(context.getBeanNamesForType(RateLimitFilter.class)).isEmpty();
        assertDeniedAfterTwo("/api/reports/ann", "report for ann");
    }

    @Test
    void aFluxOverTheLimitIsAnswered429() {
        assertDeniedAfterTwo("/api/lines/bob", "line 1 for bobline 2 for bob");
    }

    @Test
    void aFutureOverTheLimitIsAnswered429() {
        assertDeniedAfterTwo("/api/later/cid", "later for cid");
    }
}
