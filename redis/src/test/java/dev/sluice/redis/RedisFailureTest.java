package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import dev.sluice.tck.Tck;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A Redis that dies, comes back, or was never there: clear errors within the timeout, then recovery. */
class RedisFailureTest {

    /**
     * Runs a call that must fail on another thread and returns its failure; the 10 s wait is a hang guard only
     * (10 budgets and more). How close to its budget a call fails is measured by the fault benchmark.
     */
    private static Throwable failsWithin(Duration timeout, org.assertj.core.api.ThrowableAssert.ThrowingCallable call)
            throws Exception {
        assertThat(timeout.multipliedBy(10)).isLessThanOrEqualTo(Duration.ofSeconds(10));
        Throwable e = CompletableFuture.supplyAsync(() -> catchThrowable(call)).get(10, TimeUnit.SECONDS);
        assertThat(e).isNotNull();
        return e;
    }

    @Test
    void aRestartedRedisIsReconnectedAndKeepsDeciding() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            ManualTicker t = Tck.ticker();
            Limit l = Limit.tokenBucket(3, Rate.perHour(1));
            try (RedisRateLimiter rl = RedisRateLimiter.builder(server.uri())
                    .ticker(t)
                    .timeBudget(Duration.ofMillis(500))
                    .build()) {
                assertThat(rl.tryAcquire("k", l, 3).allowed()).isTrue();
                assertThat(rl.tryAcquire("k", l).allowed()).isFalse();

                server.stop(); // SIGKILL: state and loaded scripts are gone
                Throwable down = failsWithin(Duration.ofMillis(500), () -> rl.tryAcquire("k", l));
                assertThat(down)
                        .isInstanceOf(RedisStoreException.class)
                        .hasMessageContaining(server.uri().replace("redis://", ""));

                server.startProcess();
                // Lettuce reconnects in the background; the first calls after the restart may still fail
                Decision d = firstAnswer(Duration.ofSeconds(20), () -> rl.tryAcquire("k", l));
                // a fresh Redis (no persistence): the bucket is full again, and the scripts were re-sent
                assertThat(d)
                        .isEqualTo(
                                new Decision(true, 3, 2, 0, Duration.ofHours(1).toNanos()));
                assertThat(rl.tryAcquire("k", l, 2))
                        .isEqualTo(
                                new Decision(true, 3, 0, 0, Duration.ofHours(3).toNanos()));
            }
        }
    }

    @Test
    void aCallWhoseReplyIsCutOffIsChargedAtMostOnceAndTheLimiterReconnects() throws Exception {
        // Redis runs the EVALSHA, then the connection drops before the reply: Lettuce's default
        // (at-least-once) would re-send it on reconnect and charge the permits twice
        try (RedisServer server = RedisServer.start();
                CuttingProxy proxy = new CuttingProxy(server.port)) {
            Limit l = Limit.tokenBucket(10, Rate.perHour(1));
            try (RedisRateLimiter rl = RedisRateLimiter.builder(proxy.uri())
                    .cluster(false)
                    .ticker(Tck.ticker())
                    .timeBudget(Duration.ofSeconds(2))
                    .build()) {
                assertThat(rl.tryAcquire("k", l, 3).remaining()).isEqualTo(7);
                proxy.cutNextEvalsha();
                Throwable cut = catchThrowable(() -> rl.tryAcquire("k", l, 3));
                assertThat(proxy.cuts()).isEqualTo(1);
                assertThat(cut)
                        .isInstanceOf(RedisStoreException.class)
                        .hasMessageContaining("may or may not have been applied");
                assertThat(((RedisStoreException) cut).degradation())
                        .as("a lost connection fails the call as unavailable, not at the timeout")
                        .isEqualTo(Degradation.UNAVAILABLE);
                Decision d = firstAnswer(Duration.ofSeconds(20), () -> rl.tryAcquire("k", l, 1));
                // 10 - 3 - 3 (the cut call, run once by Redis) - 1: not 0, as a replayed call would leave
                assertThat(d).isNotNull();
                assertThat(d.remaining()).isEqualTo(3);
            }
        }
    }

    @Test
    void theNoscriptFallbackSharesTheCallsDeadline() throws Exception {
        // a slow EVALSHA answered NOSCRIPT just inside the timeout, then a slow EVAL: two attempts, one deadline
        Duration timeout = Duration.ofMillis(500);
        try (RedisServer server = RedisServer.start();
                CuttingProxy proxy = new CuttingProxy(server.port);
                RedisRateLimiter rl = RedisRateLimiter.builder(proxy.uri())
                        .cluster(false)
                        .ticker(Tck.ticker())
                        .timeBudget(timeout)
                        .build()) {
            Limit l = Limit.fixedWindow(100, Duration.ofSeconds(1));
            assertThat(rl.tryAcquire("k", l).remaining()).isEqualTo(99);
            proxy.delay("EVALSHA", 350);
            proxy.delay("EVAL", 1000);
            io.lettuce.core.RedisClient admin = io.lettuce.core.RedisClient.create(server.uri());
            try (var c = admin.connect()) {
                // the future of an async call, then a sync call, each after a SCRIPT FLUSH
                c.sync().scriptFlush();
                long evals = evalCalls(c.sync().info("commandstats"));
                Throwable async =
                        failsWithin(timeout, () -> rl.tryAcquireAsync("k", l, 1).join());
                assertThat(async).hasCauseInstanceOf(RedisStoreException.class);
                assertThat(async.getCause()).hasMessageContaining("did not answer within 500 ms");
                // the proxy lets the late EVAL through, which caches the script again: Redis has run it
                Eventually.await(
                        Duration.ofSeconds(15),
                        "Redis running the late EVAL",
                        () -> evalCalls(c.sync().info("commandstats")) > evals);
                c.sync().scriptFlush();
                assertThat(failsWithin(timeout, () -> rl.tryAcquire("k", l)))
                        .isInstanceOf(RedisStoreException.class)
                        .hasMessageContaining("did not answer within 500 ms");
            } finally {
                admin.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            }
        }
    }

    @Test
    void aRedisThatIsDownAtStartIsAClearErrorWithinTheTimeout() throws Exception {
        int port = RedisServer.freePort(); // nothing listens there
        Throwable e = failsWithin(
                Duration.ofMillis(500),
                () -> RedisRateLimiter.builder("redis://127.0.0.1:" + port)
                        .connectTimeout(Duration.ofMillis(500))
                        .build());
        assertThat(e)
                .isInstanceOf(RedisStoreException.class)
                .hasMessageContaining("cannot connect to Redis at redis://127.0.0.1:" + port)
                .hasMessageContaining("check that Redis is running");
    }

    @Test
    void aSlowRedisFailsTheCallWithinTheTimeoutAndTheNextCallsSucceed() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisRateLimiter rl = RedisRateLimiter.builder(server.uri())
                        .ticker(Tck.ticker())
                        .timeBudget(Duration.ofMillis(300))
                        .build()) {
            Limit l = Limit.fixedWindow(100, Duration.ofSeconds(1));
            assertThat(rl.tryAcquire("k", l).remaining()).isEqualTo(99);
            io.lettuce.core.RedisClient admin = io.lettuce.core.RedisClient.create(server.uri());
            try (var c = admin.connect()) {
                c.sync().clientPause(1500); // Redis stalls for 1.5 s
            } finally {
                admin.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            }
            assertThat(failsWithin(Duration.ofMillis(300), () -> rl.tryAcquire("k", l)))
                    .isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("did not answer within 300 ms")
                    .extracting(e -> ((RedisStoreException) e).degradation())
                    .isEqualTo(Degradation.TIMEOUT);
            // once Redis answers again, so does the limiter. A call that timed out was still queued in Redis
            // and may have been counted: a timeout means "unknown", not "nothing taken"
            Decision d = firstAnswer(Duration.ofSeconds(10), () -> rl.tryAcquire("k", l));
            assertThat(d).isNotNull();
            assertThat(d.allowed()).isTrue();
        }
    }

    @Test
    void aRedisThatStopsAnsweringFailsEachCallWithinTheTimeout() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            Limit l = Limit.fixedWindow(5, Duration.ofSeconds(1));
            try (RedisRateLimiter rl = RedisRateLimiter.builder(server.uri())
                    .timeBudget(Duration.ofMillis(300))
                    .build()) {
                assertThat(rl.tryAcquire("k", l).allowed()).isTrue();
                server.stop();
                for (int i = 0; i < 3; i++) {
                    assertThat(failsWithin(Duration.ofMillis(300), () -> rl.tryAcquire("k", l)))
                            .isInstanceOf(RedisStoreException.class)
                            .hasMessageContaining("Redis at redis://127.0.0.1:" + server.port)
                            .extracting(e -> ((RedisStoreException) e).degradation())
                            .isEqualTo(Degradation.UNAVAILABLE);
                }
                assertThatThrownBy(() -> rl.tryAcquireAsync("k", l, 1).get(10, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(RedisStoreException.class);
            }
        }
    }

    /** The first decision of {@code call} that Redis answers: Lettuce reconnects in the background meanwhile. */
    private static Decision firstAnswer(Duration guard, java.util.function.Supplier<Decision> call) {
        java.util.concurrent.atomic.AtomicReference<Decision> d = new java.util.concurrent.atomic.AtomicReference<>();
        Eventually.await(guard, "a decision once Redis answers again", () -> {
            try {
                d.set(call.get());
                return true;
            } catch (RedisStoreException notYet) {
                return false;
            }
        });
        return d.get();
    }

    /** The EVAL calls Redis has run, from {@code INFO commandstats} ({@code cmdstat_eval:calls=N,…}). */
    private static long evalCalls(String commandstats) {
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("cmdstat_eval:calls=(\\d+)").matcher(commandstats);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }
}
