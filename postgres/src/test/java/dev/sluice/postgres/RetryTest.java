package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * SQLSTATE 40001 under {@code default_transaction_isolation = serializable}: retried inside the library,
 * counted, never seen by the caller while the policy lasts; and an exact number of admissions.
 */
class RetryTest {
    private static HikariDataSource serializable;

    @BeforeAll
    static void pool() {
        TestDatabase.dataSource();
        serializable = TestDatabase.pool("set default_transaction_isolation = serializable", 10);
    }

    @AfterAll
    static void close() {
        serializable.close();
    }

    @Test
    void hotKeyUnderSerializableAdmitsExactlyTheCapacityAndNoExceptionReachesTheCaller() throws Exception {
        RetryPolicy generous =
                new RetryPolicy(1_000, Duration.ofMillis(1), Duration.ofMillis(20), Duration.ofSeconds(60));
        int threads = 8;
        int callsPerThread = 40;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (PostgresRateLimiter rl =
                TestDatabase.builder(serializable).retryPolicy(generous).build()) {
            for (Limit limit : List.of(
                    Limit.tokenBucket(100, Rate.perHour(1)),
                    Limit.slidingLog(100, Duration.ofHours(1)),
                    Limit.fixedWindow(100, Duration.ofDays(3650)))) {
                String key = "hot:" + UUID.randomUUID();
                AtomicLong admitted = new AtomicLong();
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    done.add(pool.submit(() -> {
                        start.await();
                        for (int n = 0; n < callsPerThread; n++) {
                            if (rl.tryAcquire(key, limit).allowed()) {
                                admitted.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES); // rethrows whatever reached a caller
                }
                // 320 calls on a bucket of 100 refilling one an hour (a window of 10 years): exactly 100 pass
                assertThat(admitted.get()).as("%s", limit).isEqualTo(100);
            }
            PostgresRateLimiter.Stats stats = rl.stats();
            System.out.println("serializable hot key: " + stats);
            assertThat(stats.decisions()).isEqualTo(3L * threads * callsPerThread);
            assertThat(stats.retriesExhausted()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A deterministic conflict: a transaction holds the row while the decision waits on it, then commits
     * an update, so the waiting serializable statement fails with 40001 and is retried once.
     */
    @Test
    void aSerializationFailureIsRetriedAndCounted() throws Exception {
        Limit limit = Limit.tokenBucket(10, Rate.perHour(1));
        String key = "conflict:" + UUID.randomUUID();
        try (PostgresRateLimiter rl = TestDatabase.builder(serializable).build()) {
            assertThat(rl.tryAcquire(key, limit).remaining()).isEqualTo(9);
            CompletableFuture<Decision> waiting;
            try (Connection holder = TestDatabase.dataSource().getConnection()) {
                holder.setAutoCommit(false);
                try (Statement st = holder.createStatement()) {
                    st.execute("update sluice_bucket set key = key where key_hash = sluice_key_hash('" + key
                            + "')"); // the key is a UUID we made: no quoting concerns in this test's own SQL
                }
                waiting = CompletableFuture.supplyAsync(() -> rl.tryAcquire(key, limit));
                awaitLockWaiters(1);
                holder.commit();
            }
            Decision d = waiting.get(1, TimeUnit.MINUTES);
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(8);
            assertThat(rl.stats().retries()).isEqualTo(1);
        }
    }

    @Test
    void whenThePolicyRunsOutTheCallerGetsAClearException() throws Exception {
        Limit limit = Limit.tokenBucket(10, Rate.perHour(1));
        String key = "conflict-none:" + UUID.randomUUID();
        try (PostgresRateLimiter rl = TestDatabase.builder(serializable)
                .retryPolicy(RetryPolicy.none(Duration.ofSeconds(30)))
                .build()) {
            rl.tryAcquire(key, limit);
            CompletableFuture<Decision> waiting;
            try (Connection holder = TestDatabase.dataSource().getConnection()) {
                holder.setAutoCommit(false);
                try (Statement st = holder.createStatement()) {
                    st.execute("update sluice_bucket set key = key where key_hash = sluice_key_hash('" + key + "')");
                }
                waiting = CompletableFuture.supplyAsync(() -> rl.tryAcquire(key, limit));
                awaitLockWaiters(1);
                holder.commit();
            }
            assertThatThrownBy(() -> waiting.get(1, TimeUnit.MINUTES))
                    .hasCauseInstanceOf(PostgresStoreException.class)
                    .cause()
                    .hasMessageContaining("gave up after 1 attempt(s)")
                    .hasMessageContaining("40001");
            assertThat(rl.stats().retriesExhausted()).isEqualTo(1);
            assertThat(rl.tryAcquire(key, limit).remaining())
                    .as("the failed attempt took nothing")
                    .isEqualTo(8);
        }
    }

    private static void awaitLockWaiters(int n) {
        Eventually.await(Duration.ofSeconds(30), n + " statement(s) waiting for the row lock", () -> {
            Long waiting =
                    TestDatabase.queryLong("select count(*) from pg_stat_activity where wait_event_type = 'Lock'");
            return waiting != null && waiting >= n;
        });
    }
}
