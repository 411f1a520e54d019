package dev.sluice.spring.servletapp;

import dev.sluice.ManualTicker;
import java.time.Instant;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The plainest Spring MVC application: one endpoint, {@code /api/hello}, and nothing of Micrometer's or the servlet
 * API's in its own code, so that it runs with or without them; its limits come from the command line. The store's
 * clock is frozen, so no window ends mid-test.
 */
@SpringBootApplication
public class ServletApp {

    @Bean
    ManualTicker ticker() {
        return ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @RestController
    static class Api {
        @GetMapping("/api/hello")
        String hello() {
            return "hello";
        }
    }
}
