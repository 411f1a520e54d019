package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualScheduler;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.RateLimiter;
import dev.sluice.StoreException;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.server.decision.ServerMetrics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's two watchers on a {@link ManualScheduler}: the rules' hot reload and the look at the store once a
 * second happen when the test advances time, on the test's thread. Nothing sleeps or waits.
 */
class WatchersTest {
    private static final String RULES = """
            domain: live
            descriptors:
              - key: k
                rate_limit:
                  unit: hour
                  requests_per_unit: %d
            """;

    private final ManualTicker ticker = ManualTicker.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final ManualScheduler scheduler = ManualScheduler.on(ticker);

    private static DecisionService service(RateLimiter limiter, RuleSet rules) {
        return new DecisionService(limiter, "test", rules, 250_000_000L, 64, new ServerMetrics());
    }

    private static long requestsPerUnit(DecisionService service) {
        return service.rules().domains().get("live").rules().get(0).requestsPerUnit();
    }

    @Test
    void theRulesWatcherReloadsAChangedFileAtItsNextPollAndKeepsTheRulesOnABadOne(@TempDir Path dir) throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, RULES.formatted(1));
        try (InMemoryRateLimiter limiter = InMemoryRateLimiter.create()) {
            DecisionService service = service(limiter, RuleSet.load(List.of(rules)));
            RulesWatcher watcher =
                    new RulesWatcher(List.of(rules), service, Duration.ofMillis(100), scheduler, Runnable::run);
            try {
                Files.writeString(rules, RULES.formatted(3) + "# a different size\n");
                scheduler.advance(Duration.ofMillis(99));
                assertThat(requestsPerUnit(service))
                        .as("not before the next poll")
                        .isEqualTo(1);
                scheduler.advance(Duration.ofMillis(1));
                assertThat(requestsPerUnit(service))
                        .as("the poll saw the change")
                        .isEqualTo(3);

                Files.writeString(rules, "domain: live\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: eon\n");
                scheduler.advance(Duration.ofMillis(100));
                assertThat(requestsPerUnit(service))
                        .as("a bad file keeps the rules in force")
                        .isEqualTo(3);
                assertThat(scheduler.pending()).as("the next poll").isEqualTo(1);
            } finally {
                watcher.close();
            }
            assertThat(scheduler.pending())
                    .as("close() cancelled the next poll")
                    .isZero();
        }
    }

    @Test
    void theStoreWatchLooksOnceASecondWithoutTrafficAndPublishesWhatItFinds() throws Exception {
        AtomicBoolean down = new AtomicBoolean();
        AtomicInteger probes = new AtomicInteger();
        List<Boolean> published = new CopyOnWriteArrayList<>();
        try (InMemoryRateLimiter memory =
                        InMemoryRateLimiter.builder().ticker(ticker).build();
                FailSafeRateLimiter failSafe = FailSafeRateLimiter.builder(new Switchable(memory, down, probes))
                        .policy(FailurePolicy.FAIL_OPEN)
                        .ticker(ticker)
                        .build()) {
            DecisionService service = service(failSafe, RuleSet.parse("h.yaml", RULES.formatted(1)));
            StoreWatch watch = new StoreWatch(service, published::add, scheduler, Runnable::run);
            try {
                scheduler.advance(Duration.ofMillis(999));
                assertThat(probes.get()).as("not before a second").isZero();
                scheduler.advance(Duration.ofMillis(1));
                assertThat(probes.get()).isEqualTo(1);
                assertThat(published).containsExactly(true);

                down.set(true); // the store dies while no request comes
                scheduler.advance(Duration.ofSeconds(3));
                assertThat(probes.get()).as("three more looks").isEqualTo(4);
                assertThat(published).containsExactly(true, true, true, false);
                assertThat(service.storeReport().healthy()).isFalse();

                down.set(false); // and comes back: the next look finds it, no request needed
                scheduler.advance(Duration.ofSeconds(1));
                assertThat(published).endsWith(true);
                assertThat(service.storeReport().healthy()).isTrue();
            } finally {
                watch.close();
            }
            assertThat(scheduler.pending())
                    .as("close() cancelled the next look")
                    .isZero();
        }
    }

    /** The in-memory store, or one that is down (connection refused) while {@code down} is set; counts peeks. */
    private record Switchable(RateLimiter memory, AtomicBoolean down, AtomicInteger peeks) implements RateLimiter {
        private void check() {
            if (down.get()) {
                throw new StoreException("connection refused", null, Degradation.UNAVAILABLE);
            }
        }

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            check();
            return memory.tryAcquire(key, limit, cost);
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            try {
                return CompletableFuture.completedFuture(tryAcquire(key, limit, cost));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            peeks.incrementAndGet();
            check();
            return memory.peek(key, limit, cost);
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            check();
            return memory.tryAcquire(permits);
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            check();
            return memory.reserve(key, limit, cost, maxWait);
        }

        @Override
        public void reset(String key, Limit limit) {
            check();
            memory.reset(key, limit);
        }

        @Override
        public void close() {}
    }
}
