package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Redis's side of a named limit whose numbers change: what its keys hold, the token bucket's client-side conversion
 * (its compare-and-set against a value written meanwhile), and batches that mix numbers on one key.
 */
class RedisLimitChangeTest {
    private static RedisClient client;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> redis;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(RedisServer.shared().uri());
        connection = client.connect();
        redis = connection.sync();
    }

    @AfterAll
    static void disconnect() {
        connection.close();
        client.shutdown();
    }

    private static ManualTicker ticker() {
        return ManualTicker.atEpochNanos(1_800_000_000_000_000_000L);
    }

    private static String key() {
        return "change:" + UUID.randomUUID();
    }

    @Test
    void aNamedLimitsValueCarriesTheNumbersItWasWrittenUnder() {
        ManualTicker t = ticker();
        String k = key();
        Limit l1 = Limit.tokenBucket(10, Rate.perSecond(10)).named("api");
        Limit l2 = Limit.tokenBucket(4, Rate.perSecond(2)).named("api");
        try (RedisRateLimiter rl = RedisServer.shared().limiter().ticker(t).build()) {
            assertThat(rl.tryAcquire(k, l1).allowed()).isTrue();
            String redisKey = "sluice:tb@api{" + k + "}";
            assertThat(redis.get(redisKey)).endsWith("/" + l1.id());
            // 1 spent at 100 ms is 500 ms of backlog under L2: read, converted by the client, written with L2's numbers
            Decision d = rl.tryAcquire(k, l2);
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(2);
            assertThat(redis.get(redisKey)).endsWith("/" + l2.id());
            Limit fw = Limit.fixedWindow(5, Duration.ofMinutes(1)).named("api");
            assertThat(rl.tryAcquire(k, fw).allowed()).isTrue();
            assertThat(redis.get("sluice:fw@api{" + k + "}")).endsWith(":1/" + fw.id());
            Limit sl = Limit.slidingLog(5, Duration.ofMinutes(1)).named("api");
            assertThat(rl.tryAcquire(k, sl).allowed()).isTrue();
            assertThat(redis.zrangebyscore(
                            "sluice:sl@api{" + k + "}",
                            io.lettuce.core.Range.create(Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY)))
                    .containsExactly("#" + sl.id());
        }
    }

    @Test
    void aTokenBucketValueWrittenMeanwhileUnderTheOldNumbersIsReadAgain() {
        ManualTicker t = ticker();
        String k = key();
        Limit l1 = Limit.tokenBucket(10, Rate.perSecond(10)).named("cas");
        Limit l2 = Limit.tokenBucket(10, Rate.perSecond(5)).named("cas");
        try (RedisRateLimiter a = RedisServer.shared().limiter().ticker(t).build()) {
            for (int i = 0; i < 4; i++) {
                assertThat(a.tryAcquire(k, l1).allowed()).isTrue();
            }
            // a fleet midway through a rollout: the old numbers and the new ones, one key, concurrent
            List<CompletableFuture<Decision>> calls = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                calls.add(a.tryAcquireAsync(k, i % 2 == 0 ? l1 : l2, 1));
            }
            long allowed = calls.stream().filter(f -> f.join().allowed()).count();
            assertThat(allowed)
                    .as("10 in all, whatever the numbers: 4 before, 6 now")
                    .isEqualTo(6);
            assertThat(a.peek(k, l2, 1).allowed()).isFalse();
            assertThat(a.peek(k, l1, 1).allowed()).isFalse();
        }
    }
}
