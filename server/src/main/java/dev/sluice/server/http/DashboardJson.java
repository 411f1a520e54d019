package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.sluice.Degradation;
import dev.sluice.failsafe.StoreHealth;
import dev.sluice.server.config.DomainRules;
import dev.sluice.server.config.Durations;
import dev.sluice.server.config.Rule;
import dev.sluice.server.dashboard.DeniedKeys;
import dev.sluice.server.decision.CheckResult.Outcome;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics.DecisionCounts;
import dev.sluice.server.decision.StepMetrics;
import dev.sluice.server.decision.StoreReport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The body of {@code GET /v1/dashboard}, what the dashboard page polls every second:
 *
 * <pre>{@code
 * {"clock_ms": 81234,                                   // a monotonic clock: rates are count differences over it
 *  "rules": [{"domain": "api", "id": "api.remote_address", "name": null, "kind": "limited",
 *             "algorithm": "token_bucket", "requests_per_unit": 10, "unit": "second", "window": "1s",
 *             "capacity": 20, "shadow_mode": false, "quota_mode": false, "detailed_metric": false, "source": "…"}],
 *  "series": [{"domain": "api", "rule": "api.remote_address",   // sluice_decisions_total's labels
 *              "ok": 120, "over_limit": 7, "shadow_over_limit": 0, "unlimited": 0, "blocked": 0, "checked": 1, …}],
 *  "store": {"name": "redis+leases", "healthy": false, "cause": "unavailable", "opened": true,
 *            "failure_policy": "fail_open",
 *            "degraded": {"timeout": 0, "unavailable": 3, "overloaded": 0, "store_error": 0}},
 *  "top_denied": {"window_seconds": 60, "step_seconds": 10, "denials": 7,
 *                 "keys": [{"key": "api|remote_address=198.51.100.1", "count": 7, "lower": 7, "upper": 7}]},
 *  "settles": [{"domain": "llm", "rule": "llm.user", "reserved": 9, "denied": 1,    // sluice_reservations_total
 *               "charged_more": 2, "gave_back": 6, "at_estimate": 0, "not_pending": 1,  // sluice_settles_total
 *               "charged_more_permits": 300, "given_back_permits": 1200}],
 *  "in_flight": [{"domain": "gpu", "acquired": 40, "denied": 3, "released": 38, "release_not_held": 1,
 *                 "renewed": 12, "renew_not_held": 0}]}                 // sluice_in_flight_steps_total
 * }</pre>
 *
 * Counts are totals since the start (the page turns them into per-second rates); {@code series} are the decision
 * counters of {@code /metrics}, the {@value #MAX_SERIES} with the most decisions. Keys are the store keys as callers
 * made them: the page must show them as text, never as markup. {@code store} is the {@link StoreReport} of the remote
 * store however it is wrapped ({@code cause} null while it is healthy) and its degraded decisions by cause, one field
 * per cause there is; {@code settles} ({@value #MAX_SERIES} at most) and {@code in_flight} are the counters of
 * {@link StepMetrics}, totals since the start like the rest; {@code failure_policy} and {@code degraded} are null for the in-memory store. A lone surrogate in a key (a caller may send one
 * escaped in JSON) is written as U+FFFD, so that one odd key cannot make this body unwritable.
 */
final class DashboardJson {
    /** Series in one answer at most (rules with {@code detailed_metric} have one per value sent). */
    static final int MAX_SERIES = 200;
    /** Top denied keys in one answer. */
    static final int TOP_KEYS = 20;
    /** The origin of {@code clock_ms} (only differences of it mean anything). */
    private static final long EPOCH = System.nanoTime();

    private DashboardJson() {}

    static byte[] write(DecisionService service) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(4096);
        try (JsonGenerator g = CheckJson.MAPPER.getFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberField("clock_ms", (System.nanoTime() - EPOCH) / 1_000_000L);
            rules(g, service);
            series(g, service.metrics().decisionCounts());
            store(g, service);
            top(g, service.deniedKeys().top(TOP_KEYS));
            settles(g, service.metrics().steps().ruleCounts());
            inFlight(g, service.metrics().steps().slotCounts());
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void rules(JsonGenerator g, DecisionService service) throws IOException {
        g.writeArrayFieldStart("rules");
        for (DomainRules d : service.rules().domains().values()) {
            for (Rule r : d.rules()) {
                g.writeStartObject();
                g.writeStringField("domain", d.domain());
                g.writeStringField("id", r.id());
                g.writeStringField("name", r.name());
                g.writeStringField("kind", r.kind().name().toLowerCase(Locale.ROOT));
                g.writeStringField(
                        "algorithm",
                        r.algorithm() == null ? null : r.algorithm().configName());
                g.writeNumberField("requests_per_unit", r.requestsPerUnit());
                g.writeStringField("unit", r.unit());
                g.writeStringField("window", r.window() == null ? null : Durations.format(r.window()));
                if (r.limit() != null) {
                    g.writeNumberField("capacity", r.limit().capacity());
                } else {
                    g.writeNullField("capacity");
                }
                g.writeBooleanField("shadow_mode", r.shadowMode());
                g.writeBooleanField("quota_mode", r.quotaMode());
                g.writeBooleanField("detailed_metric", r.detailedMetric());
                g.writeArrayFieldStart("replaces");
                for (String name : r.replaces()) {
                    g.writeString(name);
                }
                g.writeEndArray();
                g.writeStringField("source", r.source());
                g.writeEndObject();
            }
        }
        g.writeEndArray();
    }

    private static void series(JsonGenerator g, List<DecisionCounts> counts) throws IOException {
        g.writeNumberField("series_total", counts.size());
        counts.sort(Comparator.comparingLong(DashboardJson::decided)
                .reversed()
                .thenComparing(DecisionCounts::domain)
                .thenComparing(DecisionCounts::rule));
        g.writeArrayFieldStart("series");
        for (DecisionCounts c : counts.subList(0, Math.min(MAX_SERIES, counts.size()))) {
            g.writeStartObject();
            g.writeStringField("domain", text(c.domain()));
            g.writeStringField("rule", text(c.rule()));
            for (Outcome o : Outcome.values()) {
                g.writeNumberField(o.name().toLowerCase(Locale.ROOT), c.of(o));
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static long decided(DecisionCounts c) {
        long n = 0;
        for (long v : c.byOutcome().values()) {
            n += v;
        }
        return n;
    }

    private static void store(JsonGenerator g, DecisionService service) throws IOException {
        StoreReport report = service.storeReport();
        g.writeObjectFieldStart("store");
        g.writeStringField("name", report.store());
        g.writeBooleanField("healthy", report.healthy());
        g.writeStringField("cause", report.causeLabel());
        g.writeBooleanField("opened", report.opened());
        g.writeStringField("failure_policy", report.policyName());
        if (service.storeHealth().isEmpty()) {
            g.writeNullField("degraded");
        } else {
            StoreHealth health = service.storeHealth().get();
            g.writeObjectFieldStart("degraded");
            for (Degradation cause : Degradation.values()) {
                if (cause != Degradation.NONE) {
                    g.writeNumberField(cause.label(), health.degradedCount(cause));
                }
            }
            g.writeEndObject();
        }
        g.writeEndObject();
    }

    private static void top(JsonGenerator g, DeniedKeys.Top top) throws IOException {
        g.writeObjectFieldStart("top_denied");
        g.writeNumberField("window_seconds", DeniedKeys.WINDOW_SECONDS);
        g.writeNumberField("step_seconds", DeniedKeys.STEP_SECONDS);
        g.writeNumberField("denials", top.denials());
        g.writeArrayFieldStart("keys");
        for (DeniedKeys.KeyCount k : top.keys()) {
            g.writeStartObject();
            g.writeStringField("key", text(k.key()));
            g.writeNumberField("count", k.count());
            g.writeNumberField("lower", k.lower());
            g.writeNumberField("upper", k.upper());
            g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private static void settles(JsonGenerator g, List<StepMetrics.RuleCounts> counts) throws IOException {
        g.writeArrayFieldStart("settles");
        for (StepMetrics.RuleCounts c : counts.subList(0, Math.min(MAX_SERIES, counts.size()))) {
            g.writeStartObject();
            g.writeStringField("domain", text(c.domain()));
            g.writeStringField("rule", text(c.rule()));
            for (StepMetrics.Estimate e : StepMetrics.Estimate.values()) {
                g.writeNumberField(
                        e.name().toLowerCase(Locale.ROOT), c.estimates().getOrDefault(e, 0L));
            }
            for (StepMetrics.Settled e : StepMetrics.Settled.values()) {
                g.writeNumberField(
                        e.name().toLowerCase(Locale.ROOT), c.settles().getOrDefault(e, 0L));
            }
            g.writeNumberField("charged_more_permits", c.chargedMorePermits());
            g.writeNumberField("given_back_permits", c.givenBackPermits());
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    private static void inFlight(JsonGenerator g, List<StepMetrics.DomainSlots> counts) throws IOException {
        g.writeArrayFieldStart("in_flight");
        for (StepMetrics.DomainSlots c : counts.subList(0, Math.min(MAX_SERIES, counts.size()))) {
            g.writeStartObject();
            g.writeStringField("domain", text(c.domain()));
            for (StepMetrics.Slot step : StepMetrics.Slot.values()) {
                g.writeNumberField(
                        step.name().toLowerCase(Locale.ROOT), c.steps().getOrDefault(step, 0L));
            }
            g.writeEndObject();
        }
        g.writeEndArray();
    }

    /** The string with every unpaired surrogate replaced by U+FFFD (Jackson refuses to write one as UTF-8). */
    static String text(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean paired = Character.isHighSurrogate(c)
                    ? i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
                    : !Character.isLowSurrogate(c) || (i > 0 && Character.isHighSurrogate(s.charAt(i - 1)));
            if (!paired && b == null) {
                b = new StringBuilder(s.length()).append(s, 0, i);
            }
            if (b != null) {
                b.append(paired ? c : '\uFFFD');
            }
        }
        return b == null ? s : b.toString();
    }
}
