package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.spring.SluiceProperties.LimitProperties;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The starter names each limit of {@code sluice.limits} by its key, and a name is a limit's identity: limits built
 * again from properties with other numbers read the state the same name already has (the starter builds its rules
 * once, at startup; this is the contract a refresh of them would rely on, not a refresh).
 */
class RuleFactoryLimitChangeTest {

    private static Limit standard(long requestsPerUnit) {
        LimitProperties l = new LimitProperties();
        l.setRequestsPerUnit(requestsPerUnit);
        l.setUnit("minute");
        SluiceProperties p = new SluiceProperties();
        p.setLimits(Map.of("standard", l));
        return RuleFactory.namedLimits(p).get("standard");
    }

    @Test
    void limitsBuiltFromChangedPropertiesReadWhatTheSameNameSpent() {
        try (InMemoryRateLimiter store = InMemoryRateLimiter.builder()
                .ticker(ManualTicker.atEpochNanos(1_767_225_600_000_000_000L))
                .build()) {
            Limit before = standard(5);
            for (int i = 0; i < 5; i++) {
                assertThat(store.tryAcquire("user:42", before).allowed()).isTrue();
            }
            Limit tighter = standard(3);
            assertThat(tighter.sameIdentity(before)).isTrue();
            assertThat(store.tryAcquire("user:42", tighter).allowed())
                    .as("5 spent, 3 allowed")
                    .isFalse();
            Limit looser = standard(8);
            int admitted = 0;
            while (store.tryAcquire("user:42", looser).allowed()) {
                admitted++;
            }
            assertThat(admitted).as("8 − 5").isEqualTo(3);
        }
    }
}
