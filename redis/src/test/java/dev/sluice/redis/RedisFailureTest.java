package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.tck.Tck;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A Redis that dies, comes back, or was never there: clear errors within the timeout, then recovery. */
class RedisFailureTest {

    @Test
    void aRestartedRedisIsReconnectedAndKeepsDeciding() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            ManualTicker t = Tck.ticker();
            Limit l = Limit.tokenBucket(3, Rate.perHour(1));
            try (RedisRateLimiter rl = RedisRateLimiter.builder(server.uri()).ticker(t)
                    .commandTimeout(Duration.ofMillis(500)).build()) {
                assertThat(rl.tryAcquire("k", l, 3).allowed()).isTrue();
                assertThat(rl.tryAcquire("k", l).allowed()).isFalse();

                server.stop(); // SIGKILL: state and loaded scripts are gone
                Throwable down = catchThrowable(() -> rl.tryAcquire("k", l));
                assertThat(down).isInstanceOf(RedisStoreException.class)
                        .hasMessageContaining(server.uri().replace("redis://", ""));

                server.startProcess();
                // Lettuce reconnects in the background; the first calls after the restart may still fail
                Decision d = null;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (d == null && System.nanoTime() < deadline) {
                    try {
                        d = rl.tryAcquire("k", l);
                    } catch (RedisStoreException e) {
                        RedisServer.sleep(50);
                    }
                }
                // a fresh Redis (no persistence): the bucket is full again, and the scripts were re-sent
                assertThat(d).isEqualTo(new Decision(true, 3, 2, 0, Duration.ofHours(1).toNanos()));
                assertThat(rl.tryAcquire("k", l, 2)).isEqualTo(new Decision(true, 3, 0, 0, Duration.ofHours(3).toNanos()));
            }
        }
    }

    @Test
    void aRedisThatIsDownAtStartIsAClearErrorWithinTheTimeout() throws Exception {
        int port = RedisServer.freePort(); // nothing listens there
        CompletableFuture<Throwable> f = CompletableFuture.supplyAsync(() -> catchThrowable(
                () -> RedisRateLimiter.builder("redis://127.0.0.1:" + port).commandTimeout(Duration.ofMillis(500)).build()));
        Throwable e = f.get(10, TimeUnit.SECONDS);
        assertThat(e).isInstanceOf(RedisStoreException.class)
                .hasMessageContaining("cannot connect to Redis at redis://127.0.0.1:" + port)
                .hasMessageContaining("check that Redis is running");
    }

    @Test
    void aSlowRedisFailsTheCallWithinTheTimeoutAndTheNextCallsSucceed() throws Exception {
        try (RedisServer server = RedisServer.start();
                RedisRateLimiter rl = RedisRateLimiter.builder(server.uri()).ticker(Tck.ticker())
                        .commandTimeout(Duration.ofMillis(300)).build()) {
            Limit l = Limit.fixedWindow(100, Duration.ofSeconds(1));
            assertThat(rl.tryAcquire("k", l).remaining()).isEqualTo(99);
            io.lettuce.core.RedisClient admin = io.lettuce.core.RedisClient.create(server.uri());
            try (var c = admin.connect()) {
                c.sync().clientPause(1500); // Redis stalls for 1.5 s
            } finally {
                admin.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            }
            CompletableFuture<Throwable> f = CompletableFuture.supplyAsync(() -> catchThrowable(() -> rl.tryAcquire("k", l)));
            assertThat(f.get(10, TimeUnit.SECONDS)).isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("did not answer within PT0.3S");
            // once Redis answers again, so does the limiter. A call that timed out was still queued in Redis
            // and may have been counted: a timeout means "unknown", not "nothing taken"
            Decision d = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (d == null && System.nanoTime() < deadline) {
                try {
                    d = rl.tryAcquire("k", l);
                } catch (RedisStoreException e) {
                    RedisServer.sleep(50);
                }
            }
            assertThat(d).isNotNull();
            assertThat(d.allowed()).isTrue();
        }
    }

    @Test
    void aRedisThatStopsAnsweringFailsEachCallWithinTheTimeout() throws Exception {
        try (RedisServer server = RedisServer.start()) {
            Limit l = Limit.fixedWindow(5, Duration.ofSeconds(1));
            try (RedisRateLimiter rl = RedisRateLimiter.builder(server.uri()).commandTimeout(Duration.ofMillis(300)).build()) {
                assertThat(rl.tryAcquire("k", l).allowed()).isTrue();
                server.stop();
                for (int i = 0; i < 3; i++) {
                    CompletableFuture<Throwable> f = CompletableFuture.supplyAsync(() -> catchThrowable(() -> rl.tryAcquire("k", l)));
                    assertThat(f.get(10, TimeUnit.SECONDS)).isInstanceOf(RedisStoreException.class)
                            .hasMessageContaining("Redis at redis://127.0.0.1:" + server.port);
                }
                assertThatThrownBy(() -> rl.tryAcquireAsync("k", l, 1).get(10, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(RedisStoreException.class);
            }
        }
    }
}
