package dev.sluice.spring.methodapp;

import dev.sluice.ManualTicker;
import dev.sluice.spring.RateLimited;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * An application whose service methods are limited with {@link RateLimited}: exports by user and item count, and
 * reports returned as futures and Monos. Time is a {@link ManualTicker} that the in-memory store picks up.
 */
@SpringBootApplication
public class ExportsApp {

    public record User(String id) {}

    @Bean
    ManualTicker ticker() {
        return ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Service
    public static class ExportService {
        private final AtomicInteger bodies = new AtomicInteger();

        /** How many times a method body ran: a denied call must not run it. */
        public int bodies() {
            return bodies.get();
        }

        @RateLimited(limit = "exports", key = "#user.id", cost = "#items.size()")
        public String export(User user, List<String> items) {
            bodies.incrementAndGet();
            return "exported " + items.size() + " for " + user.id();
        }

        @RateLimited(limit = "reports", key = "#p0")
        public CompletableFuture<String> report(String user) {
            bodies.incrementAndGet();
            return CompletableFuture.completedFuture("report for " + user);
        }

        @RateLimited(limit = "reports", key = "#a0", scope = "report-mono")
        public Mono<String> reportMono(String user) {
            bodies.incrementAndGet();
            return Mono.just("mono report for " + user);
        }
    }

    @RestController
    static class Api {
        private final ExportService exports;

        Api(ExportService exports) {
            this.exports = exports;
        }

        @GetMapping("/api/exports")
        String export(@RequestParam String user, @RequestParam int items) {
            return exports.export(new User(user), Collections.nCopies(items, "item"));
        }

        @GetMapping("/api/reports/{user}")
        CompletableFuture<String> report(@PathVariable String user) {
            return exports.report(user);
        }
    }
}
