package dev.sluice.spring;

import dev.sluice.servlet.RateLimitListener.Outcome;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many calls (or requests) ended in each {@link Outcome}, since the start: one {@link LongAdder} per outcome,
 * so counting costs a contended increment and no allocation. What the {@code ratelimits} endpoint reports.
 */
final class OutcomeCounts {
    private static final Outcome[] OUTCOMES = Outcome.values();
    private final EnumMap<Outcome, LongAdder> counts = new EnumMap<>(Outcome.class);

    OutcomeCounts() {
        for (Outcome o : OUTCOMES) {
            counts.put(o, new LongAdder());
        }
    }

    void add(Outcome outcome) {
        counter(outcome).increment();
    }

    long count(Outcome outcome) {
        return counter(outcome).sum();
    }

    private LongAdder counter(Outcome outcome) {
        return Objects.requireNonNull(counts.get(outcome), "every outcome has a counter");
    }

    /** {@code {"allowed": 3, "denied": 1, "shadow_denied": 0, ...}}, every outcome present. */
    Map<String, Long> toMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Outcome o : OUTCOMES) {
            m.put(o.name().toLowerCase(Locale.ROOT), count(o));
        }
        return m;
    }
}
