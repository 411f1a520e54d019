package dev.sluice.spring.fluxapp;

import dev.sluice.ManualTicker;
import dev.sluice.spring.RateLimited;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A WebFlux application whose service returns Monos, Fluxes and futures limited with {@link RateLimited}. */
@SpringBootApplication
public class FluxApp {

    @Bean
    ManualTicker ticker() {
        return ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Service
    public static class Reports {
        @RateLimited(limit = "reports", key = "#user")
        public Mono<String> report(String user) {
            return Mono.just("report for " + user);
        }

        @RateLimited(limit = "reports", key = "#user")
        public Flux<String> lines(String user) {
            return Flux.just("line 1 for " + user, "line 2 for " + user);
        }

        @RateLimited(limit = "reports", key = "#user")
        public CompletableFuture<String> later(String user) {
            return CompletableFuture.completedFuture("later for " + user);
        }
    }

    @RestController
    static class Api {
        private final Reports reports;

        Api(Reports reports) {
            this.reports = reports;
        }

        @GetMapping("/api/reports/{user}")
        Mono<String> report(@PathVariable String user) {
            return reports.report(user);
        }

        @GetMapping("/api/lines/{user}")
        Flux<String> lines(@PathVariable String user) {
            return reports.lines(user);
        }

        @GetMapping("/api/later/{user}")
        CompletableFuture<String> later(@PathVariable String user) {
            return reports.later(user);
        }
    }
}
