package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.failsafe.FailSafeRateLimiter;
import dev.sluice.tck.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A healthy database with every default: {@code create()} warms up, so the first call succeeds however the
 * connections are handed over (a plain {@code PGSimpleDataSource}, a JDBC URL, a HikariCP pool), and many more
 * callers than connections queue rather than fail. Counted, not timed: zero errors, zero degraded decisions, and
 * exactly the limit's admissions.
 */
class HealthyStoreTest {

    private static PGSimpleDataSource simple() {
        TestDatabase.dataSource(); // started
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(TestDatabase.jdbcUrl());
        return ds;
    }

    @Test
    void theFirstCallAfterCreateSucceedsOnAPlainDataSourceAUrlAndAPool() {
        Limit limit = Limit.tokenBucket(2, Rate.perHour(2));
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(TestDatabase.jdbcUrl());
        c.setMaximumPoolSize(4);
        try (HikariDataSource hikari = new HikariDataSource(c)) {
            List<Supplier<PostgresRateLimiter>> ways = List.of(
                    () -> PostgresRateLimiter.create(simple()),
                    () -> PostgresRateLimiter.create(TestDatabase.jdbcUrl()),
                    () -> PostgresRateLimiter.create(hikari));
            for (Supplier<PostgresRateLimiter> way : ways) {
                try (PostgresRateLimiter rl = way.get()) {
                    String key = "first:" + UUID.randomUUID();
                    assertThat(rl.tryAcquire(key, limit).remaining())
                            .as("%s: the very first call decides", rl)
                            .isEqualTo(1);
                    assertThat(rl.tryAcquire(key, limit).allowed()).isTrue();
                    assertThat(rl.tryAcquire(key, limit).allowed()).isFalse();
                }
            }
            assertThat(hikari.isClosed())
                    .as("the caller's pool is the caller's to close")
                    .isFalse();
        }
    }

    @Test
    void aPlainDataSourceGetsAPoolOfItsOwnThatCloseCloses() throws Exception {
        PGSimpleDataSource ds = simple();
        String application = "sluice-own-pool-" + UUID.randomUUID().toString().substring(0, 8);
        ds.setApplicationName(application);
        try (PostgresRateLimiter rl = PostgresRateLimiter.create(ds)) {
            for (int i = 0; i < 20; i++) {
                rl.tryAcquire("pooled:" + i, Limit.fixedWindow(5, Duration.ofHours(1)));
            }
            assertThat(connections(application))
                    .as("20 decisions reuse a few pooled connections")
                    .isBetween(1L, (long) PostgresRateLimiter.DEFAULT_THREADS);
        }
        // the server sees a closed connection go when its backend exits: a wait for another process
        Eventually.await(
                Duration.ofSeconds(30), "close() closed the pool it made", () -> connections(application) == 0);
    }

    /** Eight callers per connection, sync, on one hot key and on keys of their own, behind a fail-safe wrapper. */
    @Test
    void eightTimesMoreCallersThanConnectionsQueueAndNeverFail() throws Exception {
        int connections = 4;
        int callers = 8 * connections;
        int calls = 40;
        Limit hotLimit = Limit.tokenBucket(500, Rate.perHour(1));
        Limit ownLimit = Limit.fixedWindow(25, Duration.ofDays(1));
        String hot = "hot:" + UUID.randomUUID();
        String own = "own:" + UUID.randomUUID() + ":";
        try (FailSafeRateLimiter rl = FailSafeRateLimiter.builder(
                        () -> PostgresRateLimiter.builder(TestDatabase.jdbcUrl())
                                .threads(connections)
                                .build())
                .build()) {
            assertThat(rl.storeHealthy()).isTrue();
            AtomicLong errors = new AtomicLong();
            AtomicLong hotAdmitted = new AtomicLong();
            AtomicLong[] ownAdmitted = new AtomicLong[callers];
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < callers; t++) {
                int me = t;
                ownAdmitted[me] = new AtomicLong();
                Thread th = new Thread(() -> {
                    try {
                        go.await();
                        for (int i = 0; i < calls; i++) {
                            boolean onHot = i % 2 == 0;
                            Decision d = onHot ? rl.tryAcquire(hot, hotLimit) : rl.tryAcquire(own + me, ownLimit);
                            if (d.allowed()) {
                                (onHot ? hotAdmitted : ownAdmitted[me]).incrementAndGet();
                            }
                        }
                    } catch (InterruptedException | RuntimeException e) {
                        errors.incrementAndGet();
                    }
                });
                th.start();
                threads.add(th);
            }
            go.countDown();
            for (Thread th : threads) {
                th.join(120_000); // a hang guard only
            }
            assertThat(errors.get()).as("errors").isZero();
            for (Degradation cause : Degradation.values()) {
                assertThat(rl.degradedCount(cause))
                        .as("decisions degraded for %s", cause)
                        .isZero();
            }
            assertThat(hotAdmitted.get())
                    .as("the hot key admits exactly its capacity")
                    .isEqualTo(Math.min(hotLimit.capacity(), (long) callers * calls / 2));
            for (AtomicLong n : ownAdmitted) {
                assertThat(n.get())
                        .as("each caller's own key admits exactly its 20 calls (limit 25)")
                        .isEqualTo(calls / 2);
            }
        }
    }

    private static long connections(String application) throws Exception {
        try (var c = TestDatabase.dataSource().getConnection();
                var ps = c.prepareStatement("select count(*) from pg_stat_activity where application_name = ?")) {
            ps.setString(1, application);
            try (var rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
