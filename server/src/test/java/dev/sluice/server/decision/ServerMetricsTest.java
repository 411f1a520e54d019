package dev.sluice.server.decision;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The decisions metric stays bounded whatever values callers send into detailed labels. */
class ServerMetricsTest {

    @Test
    void ruleLabelsPastTheBoundAreCountedUnderOther() {
        ServerMetrics m = new ServerMetrics();
        int n = ServerMetrics.MAX_RULE_LABELS + 500;
        for (int i = 0; i < n; i++) {
            m.decision("api", "api.user_" + i, CheckResult.Outcome.OK);
        }
        m.decision("api", "api.user_0", CheckResult.Outcome.OK); // an early label keeps counting under its own name
        String scrape = m.scrape();
        long series = scrape.lines()
                .filter(l -> l.startsWith("sluice_decisions_total{"))
                .count();
        assertThat(series).isEqualTo(ServerMetrics.MAX_RULE_LABELS + 1);
        assertThat(scrape).contains("rule=\"_other\"");
        assertThat(scrape.lines()
                        .filter(l -> l.startsWith("sluice_decisions_total{") && l.contains("rule=\"_other\""))
                        .findFirst()
                        .orElseThrow())
                .endsWith(" 500.0");
        assertThat(scrape.lines()
                        .filter(l -> l.contains("rule=\"api.user_0\""))
                        .findFirst()
                        .orElseThrow())
                .endsWith(" 2.0");
    }
}
