package dev.sluice.example;

import java.security.Principal;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small API limited by Sluice: every {@code /api/**} call per client address, and per user with a free or pro
 * tier; exports by the page, with {@link ExportService}'s {@code @RateLimited}. The limits are all in
 * {@code application.yml}.
 */
@SpringBootApplication
@RestController
public class ApiApplication {
    private final ExportService exports;

    public ApiApplication(ExportService exports) {
        this.exports = exports;
    }

    public static void main(String[] args) {
        SpringApplication.run(ApiApplication.class, args);
    }

    @GetMapping("/api/greeting")
    Map<String, String> greeting(@Nullable Principal user) {
        return Map.of("greeting", "hello " + (user == null ? "stranger" : user.getName()));
    }

    @PostMapping("/api/exports")
    ExportService.Export export(@Nullable Principal user, @RequestParam int pages) {
        return exports.export(user == null ? "stranger" : user.getName(), pages);
    }
}
