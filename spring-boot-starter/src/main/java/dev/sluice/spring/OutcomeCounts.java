package dev.sluice.spring;

import dev.sluice.servlet.RateLimitListener.Outcome;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many calls (or requests) ended in each {@link Outcome}, since the start: one {@link LongAdder} per outcome,
 * so counting costs a contended increment and no allocation. What the {@code ratelimits} endpoint reports.
 */
final class OutcomeCounts {
    private static final Outcome[] OUTCOMES = Outcome.values();
    private final LongAdder[] counts = new LongAdder[OUTCOMES.length];

    OutcomeCounts() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    void add(Outcome outcome) {
        counts[outcome.ordinal()].increment();
    }

    long count(Outcome outcome) {
        return counts[outcome.ordinal()].sum();
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
