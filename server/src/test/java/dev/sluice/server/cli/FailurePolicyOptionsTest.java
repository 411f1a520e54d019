package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.failsafe.FailurePolicy;
import dev.sluice.memory.InMemoryRateLimiter;
import dev.sluice.postgres.RetryPolicy;
import dev.sluice.redis.RedisRateLimiter;
import dev.sluice.redis.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How {@code --failure-policy} and {@code --store-timeout} reach the store, and what they refuse. */
class FailurePolicyOptionsTest {

    @Test
    void policiesAreNamedLikeTheEnumInAnyCase() {
        assertThat(Stores.policy("fail_open")).isEqualTo(FailurePolicy.FAIL_OPEN);
        assertThat(Stores.policy("FAIL-CLOSED")).isEqualTo(FailurePolicy.FAIL_CLOSED);
        assertThat(Stores.policy(" fallback_local ")).isEqualTo(FailurePolicy.FALLBACK_LOCAL);
    }

    @Test
    void anUnknownPolicyRefusesToStartNamingTheChoices() {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = SluiceCommand.commandLine()
                    .execute("serve", "--failure-policy", "fail_sometimes", "--http", "off", "--grpc", "off");
        } finally {
            System.setErr(err);
        }
        assertThat(code).isEqualTo(2);
        assertThat(captured.toString(StandardCharsets.UTF_8))
                .contains("--failure-policy 'fail_sometimes' is unknown: "
                        + "use fail_open, fail_closed or fallback_local");
    }

    @Test
    void remoteStoresGetTheirDefaultBudgetAndThePolicyEvenWhenDownAtStart() throws Exception {
        int nothing = RedisServer.freePort();
        try (Stores.Opened redis = Stores.open(
                        "redis://127.0.0.1:" + nothing, 1, Stores.Budget.STORE_DEFAULT, 1, FailurePolicy.FAIL_CLOSED);
                Stores.Opened pg = Stores.open(
                        "postgresql://sluice@127.0.0.1:" + nothing + "/sluice",
                        1,
                        Stores.Budget.STORE_DEFAULT,
                        2,
                        FailurePolicy.FALLBACK_LOCAL)) {
            assertThat(redis.budget())
                    .as("the store's own default, not one of the service's")
                    .contains(RedisRateLimiter.DEFAULT_TIME_BUDGET)
                    .contains(Stores.REDIS_BUDGET);
            assertThat(pg.budget()).contains(RetryPolicy.DEFAULT.budget()).contains(Stores.POSTGRES_BUDGET);
            assertThat(((FailSafeRateLimiter) redis.limiter()).policy()).isEqualTo(FailurePolicy.FAIL_CLOSED);
            assertThat(((FailSafeRateLimiter) pg.limiter()).policy()).isEqualTo(FailurePolicy.FALLBACK_LOCAL);
            Limit limit = Limit.fixedWindow(1, Duration.ofMinutes(1));
            var denied = redis.limiter().tryAcquire("k", limit, 1);
            assertThat(denied.allowed()).isFalse();
            assertThat(denied.degradation()).isEqualTo(Degradation.UNAVAILABLE);
            assertThat(pg.limiter().tryAcquire("k", limit, 1).allowed())
                    .as("local: the first of 1")
                    .isTrue();
            assertThat(pg.limiter().tryAcquire("k", limit, 1).allowed())
                    .as("local: over 1 a minute")
                    .isFalse();
        }
    }

    @Test
    void theMemoryStoreIsNeverWrapped() {
        try (Stores.Opened memory =
                Stores.open("memory", 16, Stores.Budget.of(Duration.ofMillis(5)), 1, FailurePolicy.FAIL_CLOSED)) {
            assertThat(memory.limiter()).isInstanceOf(InMemoryRateLimiter.class);
            assertThat(memory.budget()).isEmpty();
            assertThat(memory.remote()).isFalse();
        }
    }

    @Test
    void aMalformedStoreUriRefusesToStartInsteadOfBeingRetried() {
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> Stores.open("redis://", 1, Stores.Budget.STORE_DEFAULT, 1, FailurePolicy.FAIL_OPEN))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is not a Redis URI: write redis://[user:password@]host:6379[/db]");
    }
}
