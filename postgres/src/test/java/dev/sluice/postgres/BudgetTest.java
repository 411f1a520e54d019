package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Rate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** What the time budget bounds: the statement (to the millisecond), async futures, queued work, queue lengths. */
class BudgetTest {

    private static final Duration BUDGET = Duration.ofMillis(300);
    /**
     * How late past budget + slack these tests accept an answer: far less than what they guard against
     * (a pool that never answers, a whole-second query timeout), enough for a loaded CI machine to wake a
     * thread late. PostgresFaultTest measures the bound itself, next to the machine's stalls.
     */
    private static final long LATE_MILLIS = 500;

    /** A DataSource whose getConnection waits (like an exhausted pool) until released, counting the waiters. */
    static final class StalledPool extends TestDataSource {
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger waiting = new AtomicInteger();

        @Override
        public Connection getConnection() throws SQLException {
            waiting.incrementAndGet();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return TestDatabase.dataSource().getConnection();
        }

        void awaitWaiters(int n) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (waiting.get() < n) {
                assertThat(System.nanoTime() - end).as("%s callers waiting for a connection", n).isNegative();
                Thread.sleep(5);
            }
        }
    }

    private static String key() {
        return "budget-" + UUID.randomUUID();
    }

    /** The statement's timeout is the time left to the millisecond, not rounded up to a whole second. */
    @Test
    void aStatementIsCancelledAtItsBudgetToTheMillisecond() throws Exception {
        String key = key();
        Limit limit = Limit.tokenBucket(5, Rate.perHour(1));
        try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET)).build();
                Connection holder = TestDatabase.dataSource().getConnection()) {
            assertThat(rl.tryAcquire(key, limit).allowed()).isTrue();
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement(
                    "select 1 from sluice_bucket where key_hash = sluice_key_hash(?) for update")) {
                ps.setString(1, key);
                ps.executeQuery().close();
            }
            long start = System.nanoTime();
            assertThatThrownBy(() -> rl.tryAcquire(key, limit))
                    .isInstanceOf(PostgresStoreException.class)
                    .satisfies(e -> assertThat(((PostgresStoreException) e).degradation()).isEqualTo(Degradation.TIMEOUT));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            long cancelledAfter = System.nanoTime();
            TestDatabase.awaitNoLockWaiters();
            long cancelMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            holder.rollback();
            assertThat(ms).as("the caller got its answer at the 300 ms budget").isBetween(BUDGET.toMillis(),
                    BUDGET.toMillis() + PostgresRateLimiter.SLACK_MILLIS + LATE_MILLIS);
            assertThat(cancelMs).as("the server cancelled the statement at the budget, not at a whole second (%s)",
                    cancelledAfter).isLessThan(900L);
            assertThat(rl.tryAcquire(key, limit).remaining()).as("the cancelled call took nothing").isEqualTo(3);
        }
    }

    /** A pool with no free connection cannot hold an async caller past the budget (plus slack). */
    @Test
    void anAsyncDecisionWaitingForAPooledConnectionFailsWithinItsBudget() throws Exception {
        for (boolean batching : new boolean[] {false, true}) {
            StalledPool pool = new StalledPool();
            PostgresRateLimiter.Builder b = TestDatabase.builder(pool).retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET));
            try (PostgresRateLimiter rl = batching ? b.batching(8, 1).build() : b.build()) {
                long start = System.nanoTime();
                CompletableFuture<Decision> f = rl.tryAcquireAsync(key(), Limit.tokenBucket(1, Rate.perHour(1)), 1);
                assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(PostgresStoreException.class)
                        .hasMessageContaining("waited its whole time budget of 300 ms for a pooled connection")
                        .satisfies(e -> assertThat(((PostgresStoreException) e.getCause()).degradation())
                                .as("the database is up: the client side is full").isEqualTo(Degradation.OVERLOADED));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertThat(ms).as("batching %s", batching)
                        .isLessThan(BUDGET.toMillis() + PostgresRateLimiter.SLACK_MILLIS + LATE_MILLIS);
                pool.release.countDown(); // before close, which lets work under way finish
            } finally {
                pool.release.countDown();
            }
        }
    }

    /**
     * A synchronous caller is not held by a pool with no connection to give (DataSource.getConnection
     * cannot be interrupted, and HikariCP cannot wait less than 250 ms): it fails at its budget, on every path.
     */
    @Test
    void aSyncDecisionWaitingForAPooledConnectionFailsWithinItsBudget() throws Exception {
        Limit bucket = Limit.tokenBucket(1, Rate.perHour(1));
        Limit window = Limit.fixedWindow(1, Duration.ofHours(1));
        for (boolean batching : new boolean[] {false, true}) {
            StalledPool pool = new StalledPool();
            PostgresRateLimiter.Builder b = PostgresRateLimiter.builder(pool).retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET));
            try (PostgresRateLimiter rl = batching ? b.batching(8, 1).build() : b.build()) {
                List<Runnable> calls = List.of(
                        () -> rl.tryAcquire(key(), bucket),
                        () -> rl.tryAcquire(key(), window),
                        () -> rl.reserve(key(), bucket, 1, Duration.ofSeconds(1)),
                        () -> rl.peek(key(), bucket, 1),
                        () -> rl.tryAcquire(List.of(Permit.of(key(), bucket), Permit.of(key(), window))),
                        () -> rl.reset(key(), bucket));
                for (Runnable call : calls) {
                    long start = System.nanoTime();
                    assertThatThrownBy(call::run).isInstanceOf(PostgresStoreException.class)
                            .hasMessageContaining("budget of 300 ms")
                            .satisfies(e -> assertThat(((PostgresStoreException) e).degradation())
                                    .isEqualTo(Degradation.OVERLOADED));
                    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    assertThat(ms).as("batching %s", batching).isBetween(BUDGET.toMillis(),
                            BUDGET.toMillis() + PostgresRateLimiter.SLACK_MILLIS + LATE_MILLIS);
                }
                pool.release.countDown();
            } finally {
                pool.release.countDown();
            }
        }
    }

    /** The budget starts when tryAcquireAsync is called: a decision that waited it out in the executor is not sent. */
    @Test
    void anAsyncDecisionQueuedPastItsBudgetIsNotSent() throws Exception {
        String key = key();
        Limit one = Limit.tokenBucket(1, Rate.perHour(1));
        Executor late = r -> new Thread(() -> {
            try {
                Thread.sleep(BUDGET.toMillis() + 200);
            } catch (InterruptedException e) {
                return;
            }
            r.run();
        }).start();
        try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET)).asyncExecutor(late).build()) {
            CompletableFuture<Decision> f = rl.tryAcquireAsync(key, one, 1);
            assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("nothing was sent");
            Thread.sleep(200); // let anything the late task might still send arrive
            try (PostgresRateLimiter check = TestDatabase.limiter(TestDatabase.dataSource())) {
                // another limiter: this one runs even sync calls on the late executor
                assertThat(check.tryAcquire(key, one).allowed()).as("the late decision took nothing").isTrue();
            }
        }
    }

    /** Past maxQueuedDecisions a call is rejected at once, with and without batching. */
    @Test
    void aFullQueueRejectsAtOnce() throws Exception {
        Limit limit = Limit.tokenBucket(100, Rate.perHour(1));
        StalledPool pool = new StalledPool();
        try (PostgresRateLimiter rl = TestDatabase.builder(pool).threads(8).maxQueuedDecisions(2)
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(5))).build()) {
            List<CompletableFuture<Decision>> running = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                running.add(rl.tryAcquireAsync(key(), limit, 1)); // the 8 worker threads, each waiting for a connection
                pool.awaitWaiters(i + 1); // taken by a worker, not left in the queue of 2
            }
            running.add(rl.tryAcquireAsync(key(), limit, 1));
            running.add(rl.tryAcquireAsync(key(), limit, 1)); // the queue is full now
            CompletableFuture<Decision> rejected = rl.tryAcquireAsync(key(), limit, 1);
            assertThat(rejected).isCompletedExceptionally();
            assertThatThrownBy(rejected::join).hasCauseInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("queue of 2 waiting decisions is full");
            pool.release.countDown();
            for (CompletableFuture<Decision> f : running) {
                assertThat(f.get(10, TimeUnit.SECONDS).allowed()).isTrue();
            }
        }
        StalledPool batchPool = new StalledPool();
        try (PostgresRateLimiter rl = TestDatabase.builder(batchPool).batching(1, 1).maxQueuedDecisions(2)
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(5))).build()) {
            List<CompletableFuture<Decision>> running = new ArrayList<>();
            running.add(rl.tryAcquireAsync(key(), limit, 1)); // taken by the one dispatcher
            batchPool.awaitWaiters(1);
            running.add(rl.tryAcquireAsync(key(), limit, 1));
            running.add(rl.tryAcquireAsync(key(), limit, 1));
            CompletableFuture<Decision> rejected = rl.tryAcquireAsync(key(), limit, 1);
            assertThat(rejected).isCompletedExceptionally();
            assertThatThrownBy(rejected::join).hasCauseInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("batching queue is full");
            assertThatThrownBy(() -> rl.tryAcquire(key(), limit)).isInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("batching queue is full");
            batchPool.release.countDown();
            for (CompletableFuture<Decision> f : running) {
                assertThat(f.get(10, TimeUnit.SECONDS).allowed()).isTrue();
            }
        }
    }
}
