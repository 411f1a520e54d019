package dev.sluice.server.decision;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.DownStore;
import dev.sluice.server.config.RuleSet;
import dev.sluice.store.Burst;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A turn's burst: opened once per turn, ended by the loop's task, never left open when the loop refuses it. */
class TurnBurstTest {

    @AfterEach
    void noBurstLeftOpen() {
        Burst.end();
    }

    /** Whether this thread has a burst open (a nested begin opens nothing), leaving it as it was. */
    private static boolean burstOpen() {
        if (Burst.begin()) {
            Burst.end();
            return false;
        }
        return true;
    }

    @Test
    void oneBurstPerTurnEndedByTheLoopsTask() {
        List<Runnable> tasks = new ArrayList<>();
        Executor loop = tasks::add;
        TurnBurst.open(loop);
        TurnBurst.open(loop); // a second request read in the same turn
        assertThat(burstOpen()).isTrue();
        assertThat(tasks).as("one task for the turn").hasSize(1);

        tasks.get(0).run(); // the loop's turn is over
        assertThat(burstOpen()).isFalse();

        TurnBurst.open(loop); // the next turn
        assertThat(tasks).hasSize(2);
        assertThat(burstOpen()).isTrue();
    }

    @Test
    void worthOpeningForAStoreThatIsAskedNotForTheInMemoryOne() throws Exception {
        RuleSet rules = RuleSet.parse("rules.yaml", "domain: d\ndescriptors: [{key: k}]\n");
        DecisionService memory = new DecisionService(
                InMemoryRateLimiter.create(),
                "memory",
                rules,
                Duration.ofSeconds(1).toNanos(),
                8,
                new ServerMetrics());
        DecisionService asked = new DecisionService(
                new DownStore(), "redis", rules, Duration.ofSeconds(1).toNanos(), 8, new ServerMetrics());
        assertThat(TurnBurst.worthIt(memory)).isFalse();
        assertThat(TurnBurst.worthIt(asked)).isTrue();
    }

    @Test
    void aLoopThatRefusesTheTaskLeavesNoBurstOpen() {
        Executor shuttingDown = task -> {
            throw new RejectedExecutionException("event loop shut down");
        };
        TurnBurst.open(shuttingDown);
        assertThat(burstOpen()).as("decisions go at once, as without a burst").isFalse();
    }
}
