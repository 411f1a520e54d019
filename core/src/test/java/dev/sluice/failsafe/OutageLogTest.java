package dev.sluice.failsafe;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A store that is down for a while writes one line when it goes down, one when it is back, and at most one reminder
 * every 30 s in between, however many calls, probes and attempts failed meanwhile. Time is a manual ticker.
 */
class OutageLogTest {

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final List<String> lines = new ArrayList<>();
    private final OutageLog log = new OutageLog(ticker, FailurePolicy.FAIL_OPEN, (level, line) -> lines.add(line));

    @Test
    void aMinuteOfFailuresEveryFiftyMillisecondsIsOneLinePlusTwoRemindersThenOneWhenBack() {
        for (int i = 0; i < 1300; i++) { // 65 s
            log.failing(Degradation.UNAVAILABLE, "connection refused", "trying again every 200 ms");
            ticker.advance(Duration.ofMillis(50));
        }
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0))
                .isEqualTo("store failing (unavailable): decisions follow FAIL_OPEN until it answers;"
                        + " trying again every 200 ms. Cause: connection refused");
        assertThat(lines.get(1))
                .isEqualTo("store still failing (unavailable) for 30 s, 600 failure(s) since the last"
                        + " line: decisions follow FAIL_OPEN; trying again every 200 ms. Cause: connection refused");
        assertThat(lines.get(2)).startsWith("store still failing (unavailable) for 1 min, 600 failure(s)");
        log.recovered("store answers again");
        log.recovered("store answers again");
        assertThat(lines).hasSize(4);
        assertThat(lines.get(3))
                .isEqualTo("store answers again after 1 min 5 s (was degraded: unavailable): decisions"
                        + " come from it again");
        assertThat(log.cause()).isNull();
    }

    @Test
    void aChangeOfCauseIsALineOfItsOwn() {
        log.failing(Degradation.UNAVAILABLE, "connection refused", "retrying");
        log.failing(Degradation.UNAVAILABLE, "connection refused", "retrying");
        log.failing(Degradation.MISCONFIGURED, "WRONGPASS", "retrying in 1 s");
        log.failing(Degradation.MISCONFIGURED, "WRONGPASS", "retrying in 2 s");
        assertThat(lines).hasSize(2);
        assertThat(lines.get(1)).startsWith("store now failing (misconfigured, was unavailable)");
        assertThat(log.cause()).isEqualTo(Degradation.MISCONFIGURED);
    }

    @Test
    void aHealthyStoreLogsNothing() {
        log.recovered("store answers again");
        assertThat(lines).isEmpty();
    }

    @Test
    void theCircuitTellsTheOutageOnceWithRemindersNotOnceAProbe() {
        FailSafeRateLimiterTest.FlakyStore store = new FailSafeRateLimiterTest.FlakyStore(ticker);
        Duration probe = Duration.ofMillis(200);
        FailSafeRateLimiter limiter = FailSafeRateLimiter.builder(store)
                .probeInterval(probe)
                .ticker(ticker)
                .seams(null, (level, line) -> lines.add(line))
                .build();
        Limit limit = Limit.tokenBucket(10, Rate.perSecond(1));
        store.failWith(Degradation.UNAVAILABLE);
        for (int i = 0; i < 325; i++) { // every call is a probe: 65 s
            assertThat(limiter.tryAcquire("k", limit).degradation()).isEqualTo(Degradation.UNAVAILABLE);
            ticker.advance(probe);
        }
        assertThat(store.calls.get())
                .as("each call came a probe interval after the last")
                .isEqualTo(325);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("store failing (unavailable)").contains("one call tries it every 200 ms");
        store.heal();
        assertThat(limiter.tryAcquire("k", limit).degraded()).isFalse();
        assertThat(lines).hasSize(4);
        assertThat(lines.get(3)).startsWith("store answers again after 1 min");
    }

    @Test
    void durationsReadAsWords() {
        assertThat(OutageLog.words(Duration.ofMillis(850).toNanos())).isEqualTo("850 ms");
        assertThat(OutageLog.words(Duration.ofSeconds(12).toNanos())).isEqualTo("12 s");
        assertThat(OutageLog.words(Duration.ofSeconds(60).toNanos())).isEqualTo("1 min");
        assertThat(OutageLog.words(Duration.ofSeconds(200).toNanos())).isEqualTo("3 min 20 s");
    }
}
