package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ManualTicker;
import dev.sluice.spring.testapp.TestApp;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Issue 29: {@code sluice.*} changed in the application's configuration and refreshed as a Spring Cloud user does
 * ({@code POST /actuator/refresh}, which re-reads the file {@code spring.config.import} names), over real HTTP: the
 * rules are rebuilt under the same limit name, so each client keeps what it spent under the new numbers; a bad value
 * keeps the rules in force and says why. Time is a frozen {@link ManualTicker}: nothing refills during a test. The
 * tests share one application and its file; each uses its own client addresses and writes the file it starts from.
 */
@SpringBootTest(
        classes = TestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        // on the command line, which a refresh reads again (it does not read the test's own properties)
        args = "--spring.config.import=optional:file:" + PropertyRefreshHttpTest.FILE,
        properties = {
            "management.endpoints.web.exposure.include=refresh,ratelimits",
            "sluice.trusted-proxies=127.0.0.1/32"
        })
@Import(PropertyRefreshHttpTest.Clock.class)
@ExtendWith(OutputCaptureExtension.class)
class PropertyRefreshHttpTest {
    /** The application's refreshable configuration (relative to the module, where the tests run). */
    static final String FILE = "target/property-refresh-test/sluice.properties";

    static {
        write(5, "hour"); // before the application starts: the rules of the start
    }

    @LocalServerPort
    int port;

    @TestConfiguration(proxyBeanMethods = false)
    static class Clock {
        @Bean
        ManualTicker ticker() {
            return ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
        }
    }

    /** One rule, {@code per-ip}, on {@code /api/**}, limited by the named limit {@code standard}. */
    private static void write(Object requestsPerUnit, String unit) {
        String text = "sluice.limits.standard.requests_per_unit=" + requestsPerUnit + "\n"
                + "sluice.limits.standard.unit=" + unit + "\n"
                + "sluice.rules[0].name=per-ip\n"
                + "sluice.rules[0].paths=/api/**\n"
                + "sluice.rules[0].limit=standard\n";
        try {
            Path p = Path.of(FILE);
            Files.createDirectories(p.getParent());
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private HttpResponse<String> refresh() {
        return Http.post(port, "/actuator/refresh");
    }

    private HttpResponse<String> from(String client) {
        return Http.get(port, "/api/hello", "X-Forwarded-For", client);
    }

    /** How many requests of {@code client} pass before the first 429 (at most 20). */
    private int admitted(String client) {
        int n = 0;
        while (n < 20 && from(client).statusCode() == 200) {
            n++;
        }
        return n;
    }

    @Test
    void aTightenedLimitDeniesWhoSpentMoreAndALooserOneGivesOnlyWhatIsLeft() {
        write(5, "hour");
        assertThat(refresh().statusCode()).isEqualTo(200);
        assertThat(admitted("198.51.100.1")).as("5 an hour").isEqualTo(5);

        write(3, "hour");
        HttpResponse<String> refreshed = refresh();
        assertThat(refreshed.statusCode()).isEqualTo(200);
        assertThat(refreshed.body()).contains("sluice.limits.standard.requests_per_unit");
        HttpResponse<String> denied = from("198.51.100.1");
        assertThat(denied.statusCode())
                .as("5 spent, 3 allowed now: no fresh burst")
                .isEqualTo(429);
        assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"standard\";q=3;w=3600");
        assertThat(admitted("198.51.100.2"))
                .as("a new client, under the new numbers")
                .isEqualTo(3);

        write(8, "hour");
        assertThat(refresh().statusCode()).isEqualTo(200);
        assertThat(admitted("198.51.100.1")).as("8 allowed, 5 spent").isEqualTo(3);
        assertThat(admitted("198.51.100.2")).as("8 allowed, 3 spent").isEqualTo(5);
    }

    @Test
    void aBadValueKeepsTheRulesInForceAndNamesThePropertyAndTheFix(CapturedOutput output) {
        write(5, "hour");
        assertThat(refresh().statusCode()).isEqualTo(200);
        assertThat(admitted("198.51.100.10")).isEqualTo(5);

        write(2, "fortnight");
        refresh();
        assertThat(output.getOut())
                .contains("sluice.* refresh REFUSED, the rules in force stay as they were")
                .contains("sluice.limits.standard.unit")
                .contains("fortnight");
        assertThat(admitted("198.51.100.11")).as("still 5 an hour").isEqualTo(5);

        write("many", "hour"); // does not even bind: Spring Cloud's rebinding of the properties fails too
        refresh();
        assertThat(output.getOut()).contains("requests-per-unit").contains("'many'");
        assertThat(admitted("198.51.100.12")).as("still 5 an hour").isEqualTo(5);

        write(2, "hour");
        assertThat(refresh().statusCode()).isEqualTo(200);
        assertThat(from("198.51.100.12").statusCode()).isEqualTo(429);
        assertThat(admitted("198.51.100.13")).as("fixed: 2 an hour").isEqualTo(2);
    }
}
