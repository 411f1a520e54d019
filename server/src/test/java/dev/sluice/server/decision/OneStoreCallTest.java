package dev.sluice.server.decision;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisRateLimiter;
import dev.sluice.redis.RedisServer;
import dev.sluice.server.config.DomainRules.Entry;
import dev.sluice.server.config.RuleSet;
import dev.sluice.server.decision.CheckResult.Code;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A strict check with several limited descriptors is one store call, which also tells each descriptor's own numbers:
 * counted through a wrapper around a real Redis store (every operation of the store counted, both views).
 */
class OneStoreCallTest {
    private static final String RULES = """
            domain: api
            descriptors:
              - key: user
                rate_limit: {algorithm: token_bucket, unit: minute, requests_per_unit: 5}
              - key: ip
                rate_limit: {unit: minute, requests_per_unit: 2}
              - key: org
                rate_limit: {algorithm: token_bucket, unit: hour, requests_per_unit: 100}
            """;

    @Test
    void aStrictCheckOfThreeDescriptorsIsOneStoreCallWithEachDescriptorsOwnNumbers() throws Exception {
        try (RedisServer redis = RedisServer.start();
                Counting store = new Counting(RedisRateLimiter.create(redis.uri()))) {
            DecisionService service = new DecisionService(
                    store,
                    "redis",
                    RuleSet.parse("rules.yaml", RULES),
                    Duration.ofSeconds(2).toNanos(),
                    64,
                    new ServerMetrics());
            String id = UUID.randomUUID().toString();
            CheckRequest three = new CheckRequest(
                    "api", List.of(descriptor("user", id), descriptor("ip", id), descriptor("org", id)));

            for (int remainingOfIp = 1; remainingOfIp >= 0; remainingOfIp--) {
                int before = store.calls.get();
                CheckResult r = service.check(three).get(20, TimeUnit.SECONDS);
                assertThat(store.calls.get() - before)
                        .as("store calls of one request")
                        .isEqualTo(1);
                assertThat(r.allowed()).isTrue();
                assertThat(remaining(r)).containsExactly(3L + remainingOfIp, (long) remainingOfIp, 98L + remainingOfIp);
            }

            int before = store.calls.get();
            CheckResult denied = service.check(three).get(20, TimeUnit.SECONDS);
            assertThat(store.calls.get() - before)
                    .as("store calls of a denied request")
                    .isEqualTo(1);
            assertThat(denied.allowed()).isFalse();
            // only the ip descriptor is over; the others fit and show their state as it is (nothing taken)
            assertThat(denied.statuses().stream().map(CheckResult.Status::code))
                    .containsExactly(Code.OK, Code.OVER_LIMIT, Code.OK);
            assertThat(remaining(denied)).containsExactly(3L, 0L, 98L);
            assertThat(denied.statuses().get(1).decision().retryAfterNanos()).isPositive();
            CheckResult userAlone = service.check(new CheckRequest("api", List.of(descriptor("user", id))))
                    .get(20, TimeUnit.SECONDS);
            assertThat(remaining(userAlone))
                    .as("the denied request took nothing")
                    .containsExactly(2L);
        }
    }

    private static List<Long> remaining(CheckResult r) {
        return r.statuses().stream().map(s -> s.decision().remaining()).toList();
    }

    private static CheckRequest.Descriptor descriptor(String key, String value) {
        return new CheckRequest.Descriptor(List.of(new Entry(key, value)), 1, null);
    }

    /** A real store with every operation counted, whichever view it is asked through. */
    private static final class Counting implements RateLimiter {
        final RateLimiter store;
        final AtomicInteger calls = new AtomicInteger();

        Counting(RateLimiter store) {
            this.store = store;
        }

        private <T> T counted(T result) {
            calls.incrementAndGet();
            return result;
        }

        @Override
        public Decision tryAcquire(String key, Limit limit, long cost) {
            return counted(store.tryAcquire(key, limit, cost));
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(String key, Limit limit, long cost) {
            return counted(store.tryAcquireAsync(key, limit, cost));
        }

        @Override
        public Decision tryAcquire(List<Permit> permits) {
            return counted(store.tryAcquire(permits));
        }

        @Override
        public CompletableFuture<Decision> tryAcquireAsync(List<Permit> permits) {
            return counted(store.tryAcquireAsync(permits));
        }

        @Override
        public PermitDecisions tryAcquireEach(List<Permit> permits) {
            return counted(store.tryAcquireEach(permits));
        }

        @Override
        public CompletableFuture<PermitDecisions> tryAcquireEachAsync(List<Permit> permits) {
            return counted(store.tryAcquireEachAsync(permits));
        }

        @Override
        public Decision reserve(String key, Limit limit, long cost, Duration maxWait) {
            return counted(store.reserve(key, limit, cost, maxWait));
        }

        @Override
        public CompletableFuture<Decision> reserveAsync(String key, Limit limit, long cost, Duration maxWait) {
            return counted(store.reserveAsync(key, limit, cost, maxWait));
        }

        @Override
        public Decision peek(String key, Limit limit, long cost) {
            return counted(store.peek(key, limit, cost));
        }

        @Override
        public CompletableFuture<Decision> peekAsync(String key, Limit limit, long cost) {
            return counted(store.peekAsync(key, limit, cost));
        }

        @Override
        public void reset(String key, Limit limit) {
            counted(this);
            store.reset(key, limit);
        }

        @Override
        public CompletableFuture<Void> resetAsync(String key, Limit limit) {
            return counted(store.resetAsync(key, limit));
        }

        @Override
        public void close() {
            store.close();
        }
    }
}
