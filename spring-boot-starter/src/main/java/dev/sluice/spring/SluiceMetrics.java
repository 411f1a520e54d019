package dev.sluice.spring;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.servlet.RateLimitListener.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

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
    /** By the {@code rules} tag, or by limit and method: a slot per outcome and degradation, filled when used. */
    private final ConcurrentHashMap<Object, Slots> counters = new ConcurrentHashMap<>();

    SluiceMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    private record Call(String limit, String method) {}

    /** One name's counters by outcome and degradation; the maps are complete when made, and never change. */
    private static final class Slots {
        private final EnumMap<Outcome, EnumMap<Degradation, AtomicReference<Counter>>> byOutcome =
                new EnumMap<>(Outcome.class);

        Slots() {
            for (Outcome o : OUTCOMES) {
                EnumMap<Degradation, AtomicReference<Counter>> byDegradation = new EnumMap<>(Degradation.class);
                for (Degradation d : DEGRADATIONS) {
                    byDegradation.put(d, new AtomicReference<>());
                }
                byOutcome.put(o, byDegradation);
            }
        }

        AtomicReference<Counter> slot(Outcome outcome, Degradation degradation) {
            EnumMap<Degradation, AtomicReference<Counter>> byDegradation =
                    Objects.requireNonNull(byOutcome.get(outcome), "every outcome has its slots");
            return Objects.requireNonNull(byDegradation.get(degradation), "every degradation has a slot");
        }
    }

    @Override
    public void request(String rules, Outcome outcome, @Nullable Decision decision) {
        counter(rules, outcome, decision).increment();
    }

    @Override
    public void call(String limit, String method, Outcome outcome, @Nullable Decision decision) {
        counter(new Call(limit, method), outcome, decision).increment();
    }

    private Counter counter(Object what, Outcome outcome, @Nullable Decision decision) {
        Degradation degradation = decision == null ? Degradation.NONE : decision.degradation();
        Slots slots = counters.get(what);
        if (slots == null) {
            slots = counters.computeIfAbsent(what, k -> new Slots());
        }
        AtomicReference<Counter> slot = slots.slot(outcome, degradation);
        Counter c = slot.get();
        if (c == null) { // registering twice is harmless: the registry hands back the same counter
            c = register(what, outcome, degradation);
            slot.set(c);
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
