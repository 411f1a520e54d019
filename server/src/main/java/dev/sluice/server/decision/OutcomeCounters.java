package dev.sluice.server.decision;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One counter family of the service's metrics: a counter per label pair (a domain, and a rule or none) and outcome,
 * created on first use and found again by an array index, with neither a registry lookup nor a lock. The label pairs
 * are bounded: past {@code maxLabels} of them, further ones are counted under {@value #OTHER} as second label (as
 * first label when there is no second), so that values callers send (a {@code detailed_metric} rule's, a slot's
 * domain) cannot grow the service's memory or its scrape without bound.
 *
 * @param <E> the outcomes; each one's tags ({@code outcome="ok"}, or several) come from the function given
 */
final class OutcomeCounters<E extends Enum<E>> {
    /** The label value of what is counted past the bound. */
    static final String OTHER = "_other";

    private final MeterRegistry registry;
    private final String name;
    private final String description;
    private final String firstLabel;
    private final @Nullable String secondLabel;
    private final E[] outcomes;
    private final Function<E, Tags> tagsOf;
    private final int maxLabels;
    private final ConcurrentHashMap<String, Counter[]> byLabels = new ConcurrentHashMap<>();

    OutcomeCounters(
            MeterRegistry registry,
            String name,
            String description,
            String firstLabel,
            @Nullable String secondLabel,
            Class<E> outcomes,
            Function<E, Tags> tagsOf,
            int maxLabels) {
        this.registry = registry;
        this.name = name;
        this.description = description;
        this.firstLabel = firstLabel;
        this.secondLabel = secondLabel;
        this.outcomes = outcomes.getEnumConstants();
        this.tagsOf = tagsOf;
        this.maxLabels = maxLabels;
    }

    /** Adds 1 to the counter of {@code (first, second)} and {@code outcome}; {@code second} is "" without a second. */
    void increment(String first, String second, E outcome) {
        add(first, second, outcome, 1);
    }

    /** Adds {@code n} (at least 0) to the counter of {@code (first, second)} and {@code outcome}. */
    void add(String first, String second, E outcome, long n) {
        String key = first + '\u0000' + second;
        Counter[] counters = byLabels.get(key);
        if (counters == null) {
            if (byLabels.size() >= maxLabels) {
                if (secondLabel == null) {
                    first = OTHER;
                } else {
                    second = OTHER;
                }
                key = first + '\u0000' + second;
            }
            counters = byLabels.computeIfAbsent(key, k -> newArray());
        }
        Counter c = counters[slot(outcome)];
        if (c == null) {
            Tags tags = Tags.of(firstLabel, first);
            if (secondLabel != null) {
                tags = tags.and(secondLabel, second);
            }
            c = Counter.builder(name)
                    .description(description)
                    .tags(tags.and(tagsOf.apply(outcome)))
                    .register(registry);
            counters[slot(outcome)] = c; // a benign race: register() returns the same counter
        }
        c.increment((double) n);
    }

    private Counter[] newArray() {
        return new Counter[outcomes.length];
    }

    /** Where an outcome's counter sits in a label pair's array (the arrays fill lazily; see {@link #add}). */
    @SuppressWarnings("EnumOrdinal") // the dense index of a per-outcome array, on every count
    private static int slot(Enum<?> outcome) {
        return outcome.ordinal();
    }

    /** The counts of one label pair, for each outcome ({@code second} is "" without a second label). */
    record Counts<E extends Enum<E>>(String first, String second, Map<E, Long> byOutcome) {
        long of(E outcome) {
            return byOutcome.getOrDefault(outcome, 0L);
        }
    }

    /** A reading of every counter of the family, for the dashboard (the counters the requests' path increments). */
    List<Counts<E>> counts() {
        List<Counts<E>> out = new ArrayList<>(byLabels.size());
        byLabels.forEach((k, counters) -> {
            int z = k.indexOf('\u0000');
            Map<E, Long> n = new EnumMap<>(outcomes[0].getDeclaringClass());
            for (E o : outcomes) {
                Counter c = counters[slot(o)];
                n.put(o, c == null ? 0 : (long) c.count());
            }
            out.add(new Counts<>(k.substring(0, z), k.substring(z + 1), Collections.unmodifiableMap(n)));
        });
        return out;
    }
}
