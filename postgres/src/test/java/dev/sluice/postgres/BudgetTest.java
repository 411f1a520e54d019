package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.Decision;
import dev.sluice.Degradation;
import dev.sluice.Limit;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.tck.Eventually;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What the time budget bounds, as behaviour: a statement past it is cancelled by the server and takes nothing, a
 * caller whose decision cannot get a connection while the database answers nothing fails (and is not held for
 * ever), work queued past it is not sent, queue lengths. How close to the budget the caller gets its answer is
 * measured by the fault benchmark (bench/README.md), not asserted here: these tests run on busy machines.
 */
class BudgetTest {

    private static final Duration BUDGET = Duration.ofMillis(300);
    /** The hang guard of a call that must fail at its budget: far more than 10 budgets. */
    private static final Duration HANG_GUARD = Duration.ofSeconds(15);

    /**
     * Once armed, a DataSource whose getConnection waits (like an exhausted pool) until released, counting the
     * waiters; unarmed (while the limiter is built and warms up) it passes through.
     */
    static final class StalledPool extends TestDataSource {
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicInteger waiting = new AtomicInteger();
        volatile boolean armed;

        StalledPool arm() {
            armed = true;
            return this;
        }

        @Override
        public Connection getConnection() throws SQLException {
            if (!armed) {
                return TestDatabase.dataSource().getConnection();
            }
            waiting.incrementAndGet();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return TestDatabase.dataSource().getConnection();
        }

        void awaitWaiters(int n) {
            Eventually.await(Duration.ofSeconds(10), n + " callers waiting for a connection", () -> waiting.get() >= n);
        }
    }

    /** Opens a transaction on {@code holder} that holds the key's row lock until it ends. */
    private static void lockRow(Connection holder, String key) throws SQLException {
        holder.setAutoCommit(false);
        try (PreparedStatement ps =
                holder.prepareStatement("select 1 from sluice_bucket where key_hash = sluice_key_hash(?) for update")) {
            ps.setString(1, key);
            ps.executeQuery().close();
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
        WatchedConnections connections = new WatchedConnections();
        try (PostgresRateLimiter rl = TestDatabase.builder(connections)
                        .retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET))
                        .build();
                Connection holder = TestDatabase.dataSource().getConnection()) {
            assertThat(rl.tryAcquire(key, limit).allowed()).isTrue();
            lockRow(holder, key);
            assertTimeoutPreemptively(
                    HANG_GUARD,
                    () -> assertThatThrownBy(() -> rl.tryAcquire(key, limit))
                            .isInstanceOf(PostgresStoreException.class)
                            .satisfies(e -> assertThat(((PostgresStoreException) e).degradation())
                                    .isEqualTo(Degradation.TIMEOUT)));
            connections.awaitAllReturned(); // the statement is over (57014, cancelled), while the lock is held
            TestDatabase.awaitNoLockWaiters();
            holder.rollback();
            assertThat(rl.tryAcquire(key, limit).remaining())
                    .as("the cancelled call took nothing")
                    .isEqualTo(3);
        }
    }

    /**
     * A caller who stops waiting cancels its statement, alone or in a batch (the default): with the statement's own
     * query timeout out of the way, a statement waiting for a locked row ends only by that cancel, and takes nothing.
     * (Before, a batched decision's cancel went to no statement: the batch's is the batch call's.)
     */
    @Test
    void aCallerWhoStopsWaitingCancelsItsStatementBatchedOrNot() throws Exception {
        for (boolean batching : new boolean[] {true, false}) {
            cancelledDecisionTakesNothing(batching, false);
        }
    }

    /**
     * A cancel that reaches the database before its statement does is lost (the driver sends nothing for a statement
     * not executing yet, the server ignores a cancel for a backend waiting for its next command): on a busy machine a
     * worker thread or a backend can be a whole budget late. The statement must not then wait for its row and take
     * the permits when the lock goes, its caller having been told it was cancelled: the cancel is sent again until
     * the statement is over. (Before, BadInputTest's blocked decision took a token once in a loaded run: 2 left, not
     * 3; here the statement still waited for the lock after 10 s.)
     */
    @Test
    void aCancelThatArrivesBeforeItsStatementIsSentAgainUntilTheStatementEnds() throws Exception {
        for (boolean batching : new boolean[] {true, false}) {
            cancelledDecisionTakesNothing(batching, true);
        }
    }

    /**
     * A decision waits for a locked row until its caller stops waiting and cancels it; {@code late}: its statement
     * reaches the database only after the first cancel did.
     */
    private static void cancelledDecisionTakesNothing(boolean batching, boolean late) throws Exception {
        String key = key();
        Limit limit = Limit.tokenBucket(5, Rate.perHour(1));
        WatchedConnections connections = new WatchedConnections().withoutQueryTimeouts();
        PostgresRateLimiter.Builder b =
                TestDatabase.builder(connections).retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET));
        if (!batching) {
            b.batching(false);
        }
        try (PostgresRateLimiter rl = b.build();
                Connection holder = TestDatabase.dataSource().getConnection()) {
            assertThat(rl.tryAcquire(key, limit).remaining()).isEqualTo(4);
            lockRow(holder, key);
            if (late) {
                connections.holdNextStatementUntilACancel();
            }
            assertTimeoutPreemptively(
                    HANG_GUARD,
                    () -> assertThatThrownBy(() -> rl.tryAcquire(key, limit))
                            .as("batching %s", batching)
                            .isInstanceOf(PostgresStoreException.class)
                            .hasMessageContaining("is cancelled now, so nothing was taken")
                            .satisfies(e -> assertThat(((PostgresStoreException) e).degradation())
                                    .isEqualTo(Degradation.TIMEOUT)));
            // nothing else ends the statement (without a cancel that finds it, it still waits for the lock after
            // 10 s); once its connection is back, it is over
            connections.awaitAllReturned();
            TestDatabase.awaitNoLockWaiters();
            holder.rollback();
            assertThat(rl.tryAcquire(key, limit).remaining())
                    .as("batching %s, late %s: the cancelled call took nothing", batching, late)
                    .isEqualTo(3);
        }
    }

    /** A pool with no free connection, while the database answers nothing, fails an async caller. */
    @Test
    void anAsyncDecisionWaitingForAPooledConnectionFailsWhenTheDatabaseAnswersNothing() throws Exception {
        for (boolean batching : new boolean[] {false, true}) {
            StalledPool pool = new StalledPool();
            PostgresRateLimiter.Builder b =
                    TestDatabase.builder(pool).retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET));
            try (PostgresRateLimiter rl =
                    batching ? b.batching(8, 1).build() : b.batching(false).build()) {
                pool.arm();
                CompletableFuture<Decision> f = rl.tryAcquireAsync(key(), Limit.tokenBucket(1, Rate.perHour(1)), 1);
                assertThatThrownBy(() -> f.get(HANG_GUARD.toSeconds(), TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(PostgresStoreException.class)
                        .hasMessageContaining("time budget of 300 ms for a pooled connection")
                        .satisfies(e -> assertThat(((PostgresStoreException) e.getCause()).degradation())
                                .as("the database is up: the client side is full")
                                .isEqualTo(Degradation.OVERLOADED));
                pool.release.countDown(); // before close, which lets work under way finish
            } finally {
                pool.release.countDown();
            }
        }
    }

    /**
     * A synchronous caller is not held by a pool with no connection to give (DataSource.getConnection cannot be
     * interrupted) while the database answers nothing: it fails, on every path.
     */
    @Test
    void aSyncDecisionWaitingForAPooledConnectionFailsWhenTheDatabaseAnswersNothing() throws Exception {
        Limit bucket = Limit.tokenBucket(1, Rate.perHour(1));
        Limit window = Limit.fixedWindow(1, Duration.ofHours(1));
        for (boolean batching : new boolean[] {false, true}) {
            StalledPool pool = new StalledPool();
            PostgresRateLimiter.Builder b =
                    PostgresRateLimiter.builder(pool).retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET));
            try (PostgresRateLimiter rl =
                    batching ? b.batching(8, 1).build() : b.batching(false).build()) {
                pool.arm();
                List<Runnable> calls = List.of(
                        () -> rl.tryAcquire(key(), bucket),
                        () -> rl.tryAcquire(key(), window),
                        () -> rl.reserve(key(), bucket, 1, Duration.ofSeconds(1)),
                        () -> rl.peek(key(), bucket, 1),
                        () -> rl.tryAcquire(List.of(Permit.of(key(), bucket), Permit.of(key(), window))),
                        () -> rl.reset(key(), bucket));
                for (Runnable call : calls) {
                    assertTimeoutPreemptively(
                            HANG_GUARD,
                            () -> assertThatThrownBy(call::run)
                                    .isInstanceOf(PostgresStoreException.class)
                                    .hasMessageContaining("budget of 300 ms")
                                    .satisfies(e -> assertThat(((PostgresStoreException) e).degradation())
                                            .as("batching %s", batching)
                                            .isEqualTo(Degradation.OVERLOADED)));
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
        // an executor that runs nothing until the test says so: the decision waits in it past its budget
        List<Runnable> held = new CopyOnWriteArrayList<>();
        Executor late = held::add;
        try (PostgresRateLimiter rl = TestDatabase.builder(TestDatabase.dataSource())
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(BUDGET))
                .asyncExecutor(late)
                .batching(false)
                .build()) {
            CompletableFuture<Decision> f = rl.tryAcquireAsync(key, one, 1);
            assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("nothing was sent");
            for (Runnable r : held) {
                r.run(); // the late tasks run now, past their budgets, and end before the check below
            }
            try (PostgresRateLimiter check = TestDatabase.limiter(TestDatabase.dataSource())) {
                // another limiter: this one runs even sync calls on the late executor
                assertThat(check.tryAcquire(key, one).allowed())
                        .as("the late decision took nothing")
                        .isTrue();
            }
        }
    }

    /** Past maxQueuedDecisions a call is rejected at once, with and without batching. */
    @Test
    void aFullQueueRejectsAtOnce() throws Exception {
        Limit limit = Limit.tokenBucket(100, Rate.perHour(1));
        StalledPool pool = new StalledPool();
        try (PostgresRateLimiter rl = TestDatabase.builder(pool)
                .threads(8)
                .maxQueuedDecisions(2)
                .batching(false)
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(5)))
                .build()) {
            pool.arm();
            List<CompletableFuture<Decision>> running = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                running.add(rl.tryAcquireAsync(key(), limit, 1)); // the 8 worker threads, each waiting for a connection
                pool.awaitWaiters(i + 1); // taken by a worker, not left in the queue of 2
            }
            running.add(rl.tryAcquireAsync(key(), limit, 1));
            running.add(rl.tryAcquireAsync(key(), limit, 1)); // the queue is full now
            CompletableFuture<Decision> rejected = rl.tryAcquireAsync(key(), limit, 1);
            assertThat(rejected).isCompletedExceptionally();
            assertThatThrownBy(rejected::join)
                    .hasCauseInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("queue of 2 waiting decisions is full");
            pool.release.countDown();
            for (CompletableFuture<Decision> f : running) {
                assertThat(f.get(10, TimeUnit.SECONDS).allowed()).isTrue();
            }
        }
        StalledPool batchPool = new StalledPool();
        try (PostgresRateLimiter rl = TestDatabase.builder(batchPool)
                .batching(1, 1)
                .maxQueuedDecisions(2)
                .retryPolicy(RetryPolicy.DEFAULT.withBudget(Duration.ofSeconds(5)))
                .build()) {
            batchPool.arm();
            List<CompletableFuture<Decision>> running = new ArrayList<>();
            running.add(rl.tryAcquireAsync(key(), limit, 1)); // taken by the one dispatcher
            batchPool.awaitWaiters(1);
            running.add(rl.tryAcquireAsync(key(), limit, 1));
            running.add(rl.tryAcquireAsync(key(), limit, 1));
            CompletableFuture<Decision> rejected = rl.tryAcquireAsync(key(), limit, 1);
            assertThat(rejected).isCompletedExceptionally();
            assertThatThrownBy(rejected::join)
                    .hasCauseInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("batching queue is full");
            assertThatThrownBy(() -> rl.tryAcquire(key(), limit))
                    .isInstanceOf(PostgresStoreException.class)
                    .hasMessageContaining("batching queue is full");
            batchPool.release.countDown();
            for (CompletableFuture<Decision> f : running) {
                assertThat(f.get(10, TimeUnit.SECONDS).allowed()).isTrue();
            }
        }
    }
}
