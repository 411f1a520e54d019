package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.servlet.RateLimitListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts the filter's decisions as {@code sluice.requests} with tags {@code rules} (the names of the rules that
 * applied, joined by {@code +}), {@code outcome} ({@code allowed}, {@code denied}, {@code shadow_denied},
 * {@code limiter_failed}, {@code bad_cost}) and {@code degradation} ({@code none}, or why the store did not decide:
 * {@code timeout}, {@code unavailable}, …). Tag values come from configuration, so their number is bounded.
 */
final class SluiceMetrics implements RateLimitListener {
    static final String NAME = "sluice.requests";
    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

    SluiceMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onDecision(HttpServletRequest request, List<String> rules, Outcome outcome, Decision decision) {
        String names = rules.size() == 1 ? rules.get(0) : String.join("+", rules);
        String degradation = decision == null ? "none" : decision.degradation().label();
        String id = names + '\0' + outcome + '\0' + degradation;
        counters.computeIfAbsent(id, k -> Counter.builder(NAME)
                .description("Requests a Sluice rule applied to, by what the filter did")
                .tag("rules", names)
                .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                .tag("degradation", degradation)
                .register(registry)).increment();
    }
}
