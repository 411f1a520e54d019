package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.servlet.RateLimitListener.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Sluice's Micrometer counters, the same in every kind of application:
 * <ul>
 *   <li>{@code sluice.requests} ({@code sluice_requests_total} in Prometheus): the requests that the servlet filter or
 *       Spring Cloud Gateway's limiter decided, tagged {@code rules} (the names of the filter's rules that applied,
 *       joined by {@code +}; in a gateway, the route's id), {@code outcome} and {@code degradation};</li>
 *   <li>{@code sluice.calls} ({@code sluice_calls_total}): the calls of {@link RateLimited} methods, tagged
 *       {@code limit}, {@code method} ({@code ExportService.export}), {@code outcome} and {@code degradation}.</li>
 * </ul>
 * {@code outcome} is {@code allowed}, {@code denied}, {@code shadow_denied}, {@code limiter_failed} or
 * {@code bad_cost}; {@code degradation} is {@code none}, or why the store did not decide ({@code timeout},
 * {@code unavailable}, …). Tag values come from configuration and code, so their number is bounded. Each counter is
 * registered on first use and then found without allocating.
 */
final class SluiceMetrics implements DecisionMeters {
    static final String REQUESTS = "sluice.requests";
    static final String CALLS = "sluice.calls";
    private static final Outcome[] OUTCOMES = Outcome.values();
    private static final Degradation[] DEGRADATIONS = Degradation.values();

    private final MeterRegistry registry;
    /** By the {@code rules} tag, or by limit and method: one counter per outcome and degradation, made when used. */
    private final ConcurrentHashMap<Object, AtomicReferenceArray<Counter>> counters = new ConcurrentHashMap<>();

    SluiceMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    private record Call(String limit, String method) {}

    @Override
    public void request(String rules, Outcome outcome, Decision decision) {
        counter(rules, outcome, decision).increment();
    }

    @Override
    public void call(String limit, String method, Outcome outcome, Decision decision) {
        counter(new Call(limit, method), outcome, decision).increment();
    }

    private Counter counter(Object what, Outcome outcome, Decision decision) {
        Degradation degradation = decision == null ? Degradation.NONE : decision.degradation();
        AtomicReferenceArray<Counter> byOutcome = counters.get(what);
        if (byOutcome == null) {
            byOutcome = counters.computeIfAbsent(
                    what, k -> new AtomicReferenceArray<>(OUTCOMES.length * DEGRADATIONS.length));
        }
        int i = outcome.ordinal() * DEGRADATIONS.length + degradation.ordinal();
        Counter c = byOutcome.get(i);
        if (c == null) { // registering twice is harmless: the registry hands back the same counter
            c = register(what, outcome, degradation);
            byOutcome.set(i, c);
        }
        return c;
    }

    private Counter register(Object what, Outcome outcome, Degradation degradation) {
        Counter.Builder b;
        if (what instanceof Call call) {
            b = Counter.builder(CALLS)
                    .description("Calls of @RateLimited methods, by what Sluice did with them")
                    .tag("limit", call.limit())
                    .tag("method", call.method());
        } else {
            b = Counter.builder(REQUESTS)
                    .description(
                            "Requests a Sluice rule or gateway route applied to, by what" + " Sluice did with them")
                    .tag("rules", (String) what);
        }
        return b.tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                .tag("degradation", degradation.label())
                .register(registry);
    }
}
