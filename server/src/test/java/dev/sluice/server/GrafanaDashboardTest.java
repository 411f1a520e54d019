package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.lease.LeasedRateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.tck.ForwardingRateLimiter;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code examples/grafana/sluice-dashboard.json} against a real server: every metric that a panel's PromQL (or a
 * dashboard variable's query) names must be exported by {@code GET /metrics}. The server runs a fail-safe store (an
 * in-memory one behind {@link FailSafeRateLimiter}, so that the store-health and degraded-decision metrics exist;
 * bare, and under {@link LeasedRateLimiter} as {@code --leases} wraps it) and is driven until every metric has appeared:
 * allowed and denied decisions, a rejected request, a reset the store refuses, an applied and a refused reload. A
 * panel naming a metric the service does not export fails this test, and so does a wrapper that hides the store.
 */
class GrafanaDashboardTest {
    static final Path DASHBOARD = Path.of("..", "examples", "grafana", "sluice-dashboard.json");

    /** PromQL words that look like metric names but are not. */
    private static final Set<String> KEYWORDS = Set.of(
            "and",
            "or",
            "unless",
            "bool",
            "offset",
            "by",
            "without",
            "on",
            "ignoring",
            "group_left",
            "group_right",
            "inf",
            "nan",
            "atan2");

    private static final Pattern IDENTIFIER = Pattern.compile("(?<![\\w$.:])([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\()?");
    private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)");

    /**
     * The metric names in a PromQL expression: identifiers that are not a function or aggregation (followed by
     * {@code (}), a keyword, a label inside {@code {}}, {@code by (...)} or {@code on (...)}, a duration inside
     * {@code []}, or a string.
     */
    static Set<String> metricNames(String promql) {
        String s = promql.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")
                .replaceAll("\\{[^}]*}", " ")
                .replaceAll("\\[[^\\]]*]", " ")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
        Set<String> names = new TreeSet<>();
        Matcher m = IDENTIFIER.matcher(s);
        while (m.find()) {
            if (m.group(2) == null && !KEYWORDS.contains(m.group(1).toLowerCase(java.util.Locale.ROOT))) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    /** Every PromQL expression of the dashboard, by where it is: panel targets (rows included) and variables. */
    static List<String[]> expressions(JsonNode dashboard) {
        List<String[]> out = new ArrayList<>();
        collectPanels(dashboard.get("panels"), out);
        for (JsonNode v : dashboard.path("templating").path("list")) {
            String q = v.path("query").isTextual()
                    ? v.get("query").asText()
                    : v.path("query").path("query").asText();
            Matcher m = LABEL_VALUES.matcher(q);
            if (m.find()) {
                out.add(new String[] {"variable $" + v.get("name").asText(), m.group(1)});
            } else if (!q.isBlank()) {
                out.add(new String[] {"variable $" + v.get("name").asText(), q});
            }
        }
        return out;
    }

    private static void collectPanels(JsonNode panels, List<String[]> out) {
        for (JsonNode p : panels) {
            if (p.path("type").asText().equals("row")) {
                collectPanels(p.path("panels"), out);
                continue;
            }
            String title = p.path("title").asText();
            assertThat(p.path("targets")).as("panel '%s' has queries", title).isNotEmpty();
            for (JsonNode t : p.get("targets")) {
                assertThat(t.path("expr").asText())
                        .as("panel '%s' target %s has an expr", title, t.path("refId"))
                        .isNotBlank();
                assertThat(t.path("datasource").path("uid").asText())
                        .as("panel '%s' uses the import input", title)
                        .isEqualTo("${DS_PROMETHEUS}");
                out.add(new String[] {"panel '" + title + "'", t.get("expr").asText()});
            }
        }
    }

    /** The sample names of a Prometheus text exposition ({@code name{labels} value}, comments left out). */
    static Set<String> exported(String exposition) {
        Set<String> names = new TreeSet<>();
        for (String line : exposition.split("\n", -1)) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int end = 0;
            while (end < line.length() && line.charAt(end) != '{' && line.charAt(end) != ' ') {
                end++;
            }
            names.add(line.substring(0, end));
        }
        return names;
    }

    /** "metric (in panel 'X')" for every metric an expression names that is not exported. */
    static List<String> missing(List<String[]> expressions, Set<String> exported) {
        List<String> missing = new ArrayList<>();
        for (String[] e : expressions) {
            for (String name : metricNames(e[1])) {
                if (!exported.contains(name)) {
                    missing.add(name + " (in " + e[0] + ")");
                }
            }
        }
        return missing;
    }

    @Test
    void metricNamesAreTheIdentifiersThatAreNotFunctionsLabelsOrDurations() {
        assertThat(metricNames("histogram_quantile(0.999, sum by (le, protocol) (rate(sluice_decision_duration_seconds"
                        + "_bucket{instance=~\"$instance\"}[$__rate_interval])))"))
                .containsExactly("sluice_decision_duration_seconds_bucket");
        assertThat(metricNames("sum(rate(a_total{outcome=~\"over_limit|blocked\"}[5m])) / sum(rate(b_total[5m]))"
                        + " by (domain) > bool 0.5 offset 1h"))
                .containsExactly("a_total", "b_total");
        assertThat(metricNames("up == 1 and on (instance) process_cpu_seconds_total"))
                .containsExactly("process_cpu_seconds_total", "up");
    }

    @Test
    void aPanelNamingAMetricTheServiceDoesNotExportIsReported() {
        List<String[]> expressions = List.of(
                new String[] {"panel 'ok'", "sum(rate(sluice_decisions_total[1m]))"},
                new String[] {"panel 'typo'", "sum(rate(sluice_decision_total[1m]))"});
        assertThat(missing(expressions, Set.of("sluice_decisions_total")))
                .containsExactly("sluice_decision_total (in panel 'typo')");
    }

    @ParameterizedTest(name = "leases: {0}")
    @ValueSource(booleans = {false, true})
    void everyMetricTheDashboardUsesIsExported(boolean leases, @TempDir Path dir) throws Exception {
        JsonNode dashboard = TestServer.JSON.readTree(Files.readString(DASHBOARD));
        assertThat(dashboard.path("__inputs").get(0).path("name").asText()).isEqualTo("DS_PROMETHEUS");
        List<String[]> expressions = expressions(dashboard);
        Set<String> used = new TreeSet<>();
        expressions.forEach(e -> used.addAll(metricNames(e[1])));
        assertThat(used)
                .as("the panels the dashboard promises")
                .contains(
                        "sluice_decisions_total",
                        "sluice_decision_duration_seconds_bucket",
                        "sluice_degraded_decisions_total",
                        "sluice_store_healthy",
                        "sluice_store_info",
                        "sluice_config_reloads_total",
                        "sluice_requests_rejected_total",
                        "sluice_reservations_total",
                        "sluice_settles_total",
                        "sluice_settle_adjusted_permits_total",
                        "sluice_in_flight_steps_total");

        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, """
                domain: live
                descriptors:
                  - key: user
                    rate_limit:
                      unit: hour
                      requests_per_unit: 1
                """);
        RateLimiter store = new ResetRefusingStore(InMemoryRateLimiter.builder()
                .ticker(ManualTicker.atEpochNanos(TestServer.T0))
                .build());
        RateLimiter failSafe = FailSafeRateLimiter.builder(store).build(); // the server closes it
        RateLimiter limiter = leases ? LeasedRateLimiter.over(failSafe) : failSafe;
        try (TestServer s = TestServer.startWith(
                limiter, t -> t.withConfigPaths(List.of(rules), Duration.ofHours(1)), "envoy/example5.yaml")) {
            assertThat(s.server.reload()).as("applied").isTrue();
            assertThat(s.check("live", "user=ann").status()).isEqualTo(200);
            assertThat(s.check("live", "user=ann").status()).isEqualTo(429);
            assertThat(s.post("{not json").status()).isEqualTo(400);
            assertThat(TestServer.send(HttpRequest.newBuilder(URI.create(s.base + "/v1/reset"))
                                    .timeout(Duration.ofSeconds(10))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(TestServer.check("live", -1, "user=ann")))
                                    .build())
                            .status())
                    .as("a reset the store refuses")
                    .isEqualTo(503);
            // a reservation settled below its estimate (one permit given back), and a slot taken: issue 30's panels
            String bob = "\"descriptors\":[{\"entries\":[{\"key\":\"user\",\"value\":\"bob\"}]}]";
            assertThat(s.post("{\"domain\":\"live\",\"hits\":1,\"reservation\":{\"id\":\"g-1\"}," + bob + "}")
                            .status())
                    .as("reserved")
                    .isEqualTo(200);
            TestServer.Resp settled = s.postTo(
                    "/v1/settle", "{\"domain\":\"live\",\"reservation\":{\"id\":\"g-1\"},\"actual\":0," + bob + "}");
            assertThat(settled.status()).as(settled.body()).isEqualTo(200);
            TestServer.Resp slot = s.postTo(
                    "/v1/in-flight/acquire",
                    "{\"domain\":\"gpu\",\"key\":\"t\",\"max_in_flight\":1,\"holder\":\"h\",\"lease_ns\":60000000000}");
            assertThat(slot.status()).as(slot.body()).isEqualTo(200);
            Files.writeString(rules, "domain: live\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: eon\n");
            assertThat(s.server.reload()).as("refused").isFalse();

            TestServer.Resp metrics = s.get("/metrics");
            assertThat(metrics.status()).isEqualTo(200);
            Set<String> exported = exported(metrics.body());
            assertThat(missing(expressions, exported))
                    .as("metrics the dashboard uses but /metrics does not export" + " (exported: %s)", exported)
                    .isEmpty();
        }
    }

    /** An in-memory store whose resets fail as a remote store's do when it is down. */
    static final class ResetRefusingStore extends ForwardingRateLimiter {
        ResetRefusingStore(RateLimiter delegate) {
            super(delegate);
        }

        @Override
        public void reset(String key, Limit limit) {
            throw refused();
        }

        @Override
        public CompletableFuture<Void> resetAsync(String key, Limit limit) {
            return CompletableFuture.failedFuture(refused());
        }

        private static StoreException refused() {
            return new StoreException(
                    "reset refused: the test's store is down for resets", null, Degradation.UNAVAILABLE);
        }
    }
}
