package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.RateLimiter;
import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.spring.testapp.TestApp;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

/** {@code sluice.enabled=false}: rules stay in the file, nothing is limited and no Sluice bean exists. */
@SpringBootTest(
        classes = TestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "sluice.enabled=false",
            "sluice.rules[0].name=per-ip",
            "sluice.rules[0].requests_per_unit=1",
            "sluice.rules[0].unit=hour"
        })
class OffSwitchHttpTest {
    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @Test
    void offSwitchLimitsNothingAndAddsNoHeader() {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = Http.get(port, "/api/hello");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("RateLimit")).isEmpty();
        }
        assertThat(context.getBeansOfType(RateLimiter.class)).isEmpty();
        assertThat(context.getBeansOfType(RateLimitFilter.class)).isEmpty();
    }
}
