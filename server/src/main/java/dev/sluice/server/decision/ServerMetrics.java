package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.FailureKind;
import dev.sluice.failsafe.StoreHealth;
import dev.sluice.server.config.Rule;
import dev.sluice.server.stats.EnvoyStats;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The service's Prometheus metrics:
 * <ul>
 *   <li>{@code sluice_decisions_total{domain,rule,outcome}} — one per descriptor evaluated; {@code rule} is the
 *       rule's place in its file ({@code api.plan_free.user}), or with {@code detailed_metric: true} the values
 *       actually sent (at most {@link #MAX_RULE_LABELS} label pairs, then {@value #OTHER_RULE}); {@code outcome} is
 *       ok, over_limit, shadow_over_limit, unlimited, blocked, no_rule, checked;</li>
 *   <li>{@code sluice_decision_duration_seconds} — histogram of decision latency by {@code protocol} (http, grpc),
 *       from parsed request to answer;</li>
 *   <li>{@code sluice_degraded_decisions_total{cause}} — decisions a failure policy made instead of the store, by
 *       {@link Degradation#label() cause} (every value of {@link Degradation} but {@code NONE}: {@code timeout},
 *       {@code unavailable}, …), read from the store's {@link StoreHealth#degradedCount}; remote stores only;</li>
 *   <li>{@code sluice_store_healthy} — 0 while the remote store's circuit is open (it timed out or refused
 *       connections) or it has not been opened since the start, else 1 ({@link StoreHealth#healthy}); remote stores
 *       only;</li>
 *   <li>{@code sluice_store_info{store,failure_policy}} — always 1: the store's name ({@code redis+leases}) and its
 *       failure policy ({@code fail_open}, …, {@code none} for the in-memory store);</li>
 *   <li>{@code sluice_store_errors_total{kind}} — failures the failure policy cannot absorb: resets, a store
 *       without a policy failing, the service's own deadline, readiness probes;</li>
 *   <li>{@code sluice_requests_rejected_total{reason}} — requests refused before a decision (bad input, auth);</li>
 *   <li>{@code sluice_config_reloads_total{result}} — hot reloads applied or refused.</li>
 * </ul>
 * Beside them, envoyproxy/ratelimit's own stats under its names ({@link #envoyStats()}), for statsd and envoy's
 * Prometheus names.
 */
public final class ServerMetrics {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final EnvoyStats envoyStats;

    /** With envoy's stats at its defaults. */
    public ServerMetrics() {
        this(new EnvoyStats());
    }

    public ServerMetrics(EnvoyStats envoyStats) {
        this.envoyStats = envoyStats;
    }

    /** envoyproxy/ratelimit's stats, counted where the Envoy APIs decide. */
    public EnvoyStats envoyStats() {
        return envoyStats;
    }

    /**
     * Notes a {@code ShouldRateLimit} call's failure in envoy's stats: {@code redis_error} when the store failed it,
     * {@code service_error} otherwise (a request without a domain or descriptors, as envoy's service errors).
     */
    void envoyCall(@Nullable CheckResult unused, @Nullable Throwable failure) {
        if (failure != null) {
            envoyStats.callFailed(FailureKind.of(failure).storeFailure());
        }
    }

    /**
     * A {@code ShouldRateLimit} call decided with Sluice's strict semantics, in envoy's stats: each descriptor's
     * count read from its answer (within: {@code C − remaining} after the hits; over: the hits on top of
     * {@code C − remaining}, none of them taken).
     */
    void envoyStrict(@Nullable CheckResult result, @Nullable Throwable failure) {
        envoyCall(result, failure);
        if (result == null) {
            return;
        }
        for (CheckResult.Status s : result.statuses()) {
            Rule r = s.rule();
            Decision d = s.decision();
            long h = s.hits();
            if (r != null && r.streamDone() != null) {
                continue; // counted where it was decided, as envoy counts a stream end (EnvoyStreamDoneStats)
            }
            if (r != null && r.kind() == Rule.Kind.BLOCKED) {
                envoyStats.counted(s.metricRule(), r.shadowMode(), 0, h, 0, h);
            } else if (r != null && d != null && s.limit() != null && s.outcome() != CheckResult.Outcome.SKIPPED) {
                long c = s.limit().capacity();
                long before = d.allowed() ? c - d.remaining() - h : c - d.remaining();
                envoyStats.counted(s.metricRule(), r.shadowMode(), c, h, before, before + h);
            }
        }
    }

    private final Timer httpTimer = timer("http");
    private final Timer grpcTimer = timer("grpc");

    private Timer timer(String protocol) {
        return Timer.builder("sluice.decision.duration")
                .description("Time from a parsed request to its answer")
                .tag("protocol", protocol)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(5))
                .register(registry);
    }

    /**
     * The most (domain, rule) label pairs the decisions metric keeps. {@code detailed_metric} and
     * {@code value_to_metric} put the values callers send into the {@code rule} label; past this bound further ones
     * are counted under {@value #OTHER_RULE}, so a caller cannot grow the service's memory (or the scrape) without
     * bound.
     */
    public static final int MAX_RULE_LABELS = 10_000;

    /** The {@code rule} label of decisions past {@link #MAX_RULE_LABELS}. */
    public static final String OTHER_RULE = OutcomeCounters.OTHER;

    /** Counters by domain and rule, one per outcome, created on first use (cheaper than a registry lookup). */
    private final OutcomeCounters<CheckResult.Outcome> decisions = new OutcomeCounters<>(
            registry,
            "sluice.decisions",
            "Descriptors decided, by domain, rule and outcome",
            "domain",
            "rule",
            CheckResult.Outcome.class,
            o -> Tags.of("outcome", o.name().toLowerCase(Locale.ROOT)),
            MAX_RULE_LABELS);

    private final StepMetrics steps = new StepMetrics(registry);

    public void decision(String domain, String rule, CheckResult.Outcome outcome) {
        decisions.increment(domain, rule, outcome);
    }

    /** Reservations, settles and slots ({@link StepMetrics}). */
    public StepMetrics steps() {
        return steps;
    }

    /**
     * The decisions counted so far for one {@code (domain, rule)} label pair, for each {@link CheckResult.Outcome}
     * (the dashboard turns them into rates).
     */
    public record DecisionCounts(String domain, String rule, Map<CheckResult.Outcome, Long> byOutcome) {
        public long of(CheckResult.Outcome outcome) {
            return byOutcome.getOrDefault(outcome, 0L);
        }
    }

    /**
     * A reading of every decision counter (those of {@code sluice_decisions_total}), for the dashboard: the counters
     * the decision path already increments, read here, so the dashboard adds nothing to that path for them.
     */
    public List<DecisionCounts> decisionCounts() {
        List<DecisionCounts> out = new ArrayList<>();
        for (OutcomeCounters.Counts<CheckResult.Outcome> c : decisions.counts()) {
            out.add(new DecisionCounts(c.first(), c.second(), c.byOutcome()));
        }
        return out;
    }

    public Timer timer(boolean grpc) {
        return grpc ? grpcTimer : httpTimer;
    }

    public void storeError(String kind) {
        Counter.builder("sluice.store.errors")
                .description("Store timeouts, failures and overload rejections")
                .tag("kind", kind)
                .register(registry)
                .increment();
    }

    public void rejected(String reason) {
        Counter.builder("sluice.requests.rejected")
                .description("Requests refused before a decision")
                .tag("reason", reason)
                .register(registry)
                .increment();
    }

    public void reload(boolean applied) {
        envoyStats.configLoad(applied);
        Counter.builder("sluice.config.reloads")
                .description("Rule reloads, applied or refused")
                .tag("result", applied ? "applied" : "refused")
                .register(registry)
                .increment();
    }

    /**
     * Exposes the store: its name and failure policy ({@code sluice_store_info}) and, for a store behind a failure
     * policy, however wrapped, its health as {@code health} reports it: one counter per degradation cause (every
     * cause there is, all present from the start at 0, so that dashboards and alerts need no "absent" case) and the
     * store-health gauge. Read at each scrape; nothing is added to the decisions' path.
     */
    public void store(String storeName, Optional<StoreHealth> health) {
        Gauge.builder("sluice.store.info", () -> 1)
                .description("The store and its failure policy (none: the in-memory store needs none); always 1")
                .tag("store", storeName)
                .tag(
                        "failure_policy",
                        Objects.requireNonNullElse(
                                StoreReport.of(storeName, health).policyName(), "none"))
                .register(registry);
        if (health.isEmpty()) {
            return;
        }
        StoreHealth h = health.get();
        for (Degradation cause : Degradation.values()) {
            if (cause != Degradation.NONE) {
                FunctionCounter.builder("sluice.degraded.decisions", h, x -> x.degradedCount(cause))
                        .description("Decisions made by the failure policy instead of the store, by cause")
                        .tag("cause", cause.label())
                        .register(registry);
            }
        }
        Gauge.builder("sluice.store.healthy", h, x -> x.healthy() ? 1 : 0)
                .description("0 while the store's circuit is open or it is not open yet, else 1")
                .register(registry);
    }

    /** The Prometheus text exposition. */
    public String scrape() {
        return registry.scrape();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }
}
