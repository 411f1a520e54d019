package dev.sluice.example;

import dev.sluice.spring.RateLimited;
import org.springframework.stereotype.Service;

/** Exports cost one permit a page: ten pages an hour per user ({@code sluice.limits.exports}), however they come. */
@Service
public class ExportService {

    public record Export(String user, int pages) {}

    @RateLimited(limit = "exports", key = "#user", cost = "#pages")
    public Export export(String user, int pages) {
        return new Export(user, pages);
    }
}
