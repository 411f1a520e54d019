package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.Settlement;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The metrics of a cost known afterwards and of work in flight, beside the decisions ({@link ServerMetrics}):
 * <ul>
 *   <li>{@code sluice_reservations_total{domain,rule,outcome}} — estimates asked for: {@code reserved} (allowed, the
 *       estimate taken and pending) or {@code denied} (nothing taken, nothing pending); {@code POST /v1/check} with a
 *       {@code reservation}, and a {@code reservation:} rule's request start on the Envoy APIs;</li>
 *   <li>{@code sluice_settles_total{domain,rule,outcome}} — settles, by what they did: {@code charged_more} (the actual
 *       cost was above the estimate: the difference taken, into debt if need be), {@code gave_back} (permits put
 *       back), {@code at_estimate} (nothing changed: the actual was the estimate, or nothing could be put back, e.g.
 *       a full bucket or a window that ended), {@code not_pending} (no reservation under that id: never made, denied,
 *       settled already, past its {@code settle_within}, or one the store could not settle, which the failure policy
 *       also counts in {@code sluice_degraded_decisions_total}). On the Envoy APIs a stream end that finds nothing
 *       pending is a new request's start, counted as that (a reservation or a check), not here;</li>
 *   <li>{@code sluice_settle_adjusted_permits_total{domain,rule,direction}} — the permits settles moved:
 *       {@code charged_more} (actual above estimate) or {@code given_back};</li>
 *   <li>{@code sluice_in_flight_steps_total{domain,step,outcome}} — slot steps: {@code acquire} {@code acquired} or
 *       {@code denied}; {@code release} {@code released} or {@code not_held}; {@code renew} {@code renewed} or
 *       {@code not_held}. The {@code domain} is the caller's: past {@value #MAX_SLOT_DOMAINS} distinct ones, further
 *       ones count under {@value OutcomeCounters#OTHER}.</li>
 * </ul>
 * A step answered by a failure policy counts by its answer here, and in {@code sluice_degraded_decisions_total} by its
 * cause. The {@code (domain, rule)} labels are the decisions' ({@link ServerMetrics#MAX_RULE_LABELS} at most).
 */
public final class StepMetrics {
    /** The most distinct {@code domain} labels of {@code sluice_in_flight_steps_total}. */
    public static final int MAX_SLOT_DOMAINS = 1_000;

    /** What an estimate asked for came to. */
    public enum Estimate {
        RESERVED,
        DENIED
    }

    /** What a settle did. */
    public enum Settled {
        CHARGED_MORE,
        GAVE_BACK,
        AT_ESTIMATE,
        NOT_PENDING;

        /** The outcome of settlement {@code s}. */
        static Settled of(Settlement s) {
            return !s.settled()
                    ? NOT_PENDING
                    : s.adjusted() > 0 ? CHARGED_MORE : s.adjusted() < 0 ? GAVE_BACK : AT_ESTIMATE;
        }
    }

    /** Which way a settle moved permits. */
    enum Direction {
        CHARGED_MORE,
        GIVEN_BACK
    }

    /** A slot step and its outcome. */
    public enum Slot {
        ACQUIRED("acquire", "acquired"),
        DENIED("acquire", "denied"),
        RELEASED("release", "released"),
        RELEASE_NOT_HELD("release", "not_held"),
        RENEWED("renew", "renewed"),
        RENEW_NOT_HELD("renew", "not_held");

        private final String step;
        private final String outcome;

        Slot(String step, String outcome) {
            this.step = step;
            this.outcome = outcome;
        }

        /** The {@code step} label: acquire, release or renew. */
        public String step() {
            return step;
        }

        /** The {@code outcome} label. */
        public String outcome() {
            return outcome;
        }
    }

    private final OutcomeCounters<Estimate> estimates;
    private final OutcomeCounters<Settled> settles;
    private final OutcomeCounters<Direction> permits;
    private final OutcomeCounters<Slot> slots;

    StepMetrics(MeterRegistry registry) {
        estimates = new OutcomeCounters<>(
                registry,
                "sluice.reservations",
                "Estimates reserved or denied, by domain, rule and outcome",
                "domain",
                "rule",
                Estimate.class,
                e -> Tags.of("outcome", lower(e)),
                ServerMetrics.MAX_RULE_LABELS);
        settles = new OutcomeCounters<>(
                registry,
                "sluice.settles",
                "Settles, by domain, rule and what they did",
                "domain",
                "rule",
                Settled.class,
                e -> Tags.of("outcome", lower(e)),
                ServerMetrics.MAX_RULE_LABELS);
        permits = new OutcomeCounters<>(
                registry,
                "sluice.settle.adjusted.permits",
                "Permits settles charged beyond the estimate or gave back",
                "domain",
                "rule",
                Direction.class,
                e -> Tags.of("direction", lower(e)),
                ServerMetrics.MAX_RULE_LABELS);
        slots = new OutcomeCounters<>(
                registry,
                "sluice.in.flight.steps",
                "Slot steps (acquire, release, renew) by domain and outcome",
                "domain",
                null,
                Slot.class,
                e -> Tags.of("step", e.step(), "outcome", e.outcome()),
                MAX_SLOT_DOMAINS);
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }

    /** An estimate's decision under a rule. */
    void estimated(String domain, String rule, Decision d) {
        estimates.increment(domain, rule, d.allowed() ? Estimate.RESERVED : Estimate.DENIED);
    }

    /** A settle's answer under a rule. */
    void settled(String domain, String rule, Settlement s) {
        settles.increment(domain, rule, Settled.of(s));
        if (s.adjusted() > 0) {
            permits.add(domain, rule, Direction.CHARGED_MORE, s.adjusted());
        } else if (s.adjusted() < 0) {
            permits.add(domain, rule, Direction.GIVEN_BACK, -s.adjusted());
        }
    }

    /** A slot step of {@code domain}'s slots. */
    void slot(String domain, Slot step) {
        slots.increment(domain, "", step);
    }

    /** What reservations and settles did under one rule (a {@code (domain, rule)} label pair), since the start. */
    public record RuleCounts(
            String domain,
            String rule,
            Map<Estimate, Long> estimates,
            Map<Settled, Long> settles,
            long chargedMorePermits,
            long givenBackPermits) {}

    /** Every rule with a reservation or a settle counted, sorted by domain and rule (for the dashboard). */
    public List<RuleCounts> ruleCounts() {
        Map<String, RuleCounts> out = new TreeMap<>();
        Map<Estimate, Long> noEstimates = zeros(Estimate.class);
        Map<Settled, Long> noSettles = zeros(Settled.class);
        for (OutcomeCounters.Counts<Estimate> c : estimates.counts()) {
            out.put(
                    c.first() + '\u0000' + c.second(),
                    new RuleCounts(c.first(), c.second(), c.byOutcome(), noSettles, 0, 0));
        }
        for (OutcomeCounters.Counts<Settled> c : settles.counts()) {
            RuleCounts r = out.get(c.first() + '\u0000' + c.second());
            out.put(
                    c.first() + '\u0000' + c.second(),
                    new RuleCounts(
                            c.first(), c.second(), r == null ? noEstimates : r.estimates(), c.byOutcome(), 0, 0));
        }
        for (OutcomeCounters.Counts<Direction> c : permits.counts()) {
            RuleCounts r = out.get(c.first() + '\u0000' + c.second());
            if (r != null) {
                out.put(
                        c.first() + '\u0000' + c.second(),
                        new RuleCounts(
                                r.domain(),
                                r.rule(),
                                r.estimates(),
                                r.settles(),
                                c.of(Direction.CHARGED_MORE),
                                c.of(Direction.GIVEN_BACK)));
            }
        }
        return new ArrayList<>(out.values());
    }

    /** The slot steps of each domain since the start, sorted by domain (for the dashboard). */
    public List<DomainSlots> slotCounts() {
        List<DomainSlots> out = new ArrayList<>();
        for (OutcomeCounters.Counts<Slot> c : slots.counts()) {
            out.add(new DomainSlots(c.first(), c.byOutcome()));
        }
        out.sort((a, b) -> a.domain().compareTo(b.domain()));
        return out;
    }

    /** One domain's slot steps by outcome. */
    public record DomainSlots(String domain, Map<Slot, Long> steps) {}

    private static <E extends Enum<E>> Map<E, Long> zeros(Class<E> type) {
        Map<E, Long> m = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            m.put(e, 0L);
        }
        return Collections.unmodifiableMap(m);
    }
}
