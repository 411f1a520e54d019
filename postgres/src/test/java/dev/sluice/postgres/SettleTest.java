package dev.sluice.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.Settlement;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 30 on PostgreSQL: {@code tryAcquireEstimate} and {@code settle} for every algorithm, exactly as the contract
 * (RateLimiter#settle, i30's arithmetic) says, driven by a manual ticker; idempotence, expiry, a reused id, bad input,
 * the one statement each costs, and concurrent settles of one reservation.
 */
class SettleTest {
    /** 2030-01-01T00:00:00Z: a whole minute, so the windows below start at T. */
    private static final long T = 1_893_456_000L * 1_000_000_000L;

    private static final Duration HOUR = Duration.ofHours(1);

    private ManualTicker ticker;
    private PostgresRateLimiter rl;
    private String key;

    @BeforeEach
    void start() {
        ticker = ManualTicker.atEpochNanos(T);
        rl = TestDatabase.builder(TestDatabase.dataSource()).ticker(ticker).build();
        key = "settle:" + UUID.randomUUID();
    }

    @AfterEach
    void stop() {
        rl.close();
    }

    private Decision reserve(Limit l, long estimate, String id) {
        return rl.tryAcquireEstimate(key, l, estimate, id, HOUR);
    }

    private long remaining(Limit l) {
        return rl.peek(key, l, 1).remaining();
    }

    @Test
    void tokenBucketChargesMoreInFullIntoDebtAndGivesBackUpToAFullBucket() {
        for (Limit l : List.of(Limit.tokenBucket(10, Rate.perHour(10)), Limit.gcra(Rate.perHour(10), 10))) {
            key = "settle:" + UUID.randomUUID();
            Decision d = reserve(l, 4, "a");
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(6);
            assertThat(rl.settle(key, l, "a", 7)).isEqualTo(new Settlement(true, 4, 3, 3));
            assertThat(remaining(l)).isEqualTo(3);
            assertThat(rl.settle(key, l, "a", 7)).as("settled once").isEqualTo(Settlement.NOT_PENDING);
            assertThat(remaining(l)).isEqualTo(3);

            assertThat(reserve(l, 2, "b").remaining()).isEqualTo(1);
            assertThat(rl.settle(key, l, "b", 0)).isEqualTo(new Settlement(true, 2, -2, 3));

            // debt: the whole difference is charged though the bucket is empty
            assertThat(reserve(l, 3, "c").remaining()).isZero();
            assertThat(rl.settle(key, l, "c", 10)).isEqualTo(new Settlement(true, 3, 7, 0));
            Decision denied = rl.tryAcquire(key, l);
            assertThat(denied.allowed()).isFalse();
            // 7 permits of debt plus the one asked for: 8 intervals of 6 minutes
            assertThat(denied.retryAfterNanos())
                    .isEqualTo(Duration.ofMinutes(48).toNanos());
        }
    }

    @Test
    void aFullBucketKeepsNothingMore() {
        Limit l = Limit.tokenBucket(10, Rate.perHour(10));
        reserve(l, 4, "a");
        ticker.advance(Duration.ofMinutes(18)); // 3 permits back: 9
        assertThat(rl.settle(key, l, "a", 0)).as("only 1 fits").isEqualTo(new Settlement(true, 4, -1, 10));
        reserve(l, 4, "b");
        ticker.advance(Duration.ofMinutes(9)); // 1.5 permits back: backlog 2.5 permits
        assertThat(rl.settle(key, l, "b", 3))
                .as("1.5 permits in the bucket: 1 whole one given back")
                .isEqualTo(new Settlement(true, 4, -1, 8));
        assertThat(remaining(l)).isEqualTo(8);
    }

    @Test
    void fixedWindowGivesBackOnlyInTheReservationsWindow() {
        Limit l = Limit.fixedWindow(10, Duration.ofMinutes(1));
        assertThat(reserve(l, 4, "a").remaining()).isEqualTo(6);
        assertThat(rl.settle(key, l, "a", 1)).isEqualTo(new Settlement(true, 4, -3, 9));
        assertThat(reserve(l, 4, "b").remaining()).isEqualTo(5);
        assertThat(rl.settle(key, l, "b", 9)).isEqualTo(new Settlement(true, 4, 5, 0));
        assertThat(reserve(l, 4, "c").allowed()).isFalse();
        assertThat(rl.settle(key, l, "c", 0)).as("denied: nothing pending").isEqualTo(Settlement.NOT_PENDING);

        ticker.advance(Duration.ofMinutes(1));
        assertThat(reserve(l, 3, "d").remaining()).isEqualTo(7);
        ticker.advance(Duration.ofMinutes(1));
        assertThat(rl.settle(key, l, "d", 0)).as("its window ended").isEqualTo(new Settlement(true, 3, 0, 10));
        assertThat(reserve(l, 3, "e").remaining()).isEqualTo(7);
        ticker.advance(Duration.ofSeconds(61));
        assertThat(rl.settle(key, l, "e", 5))
                .as("counted in the current window")
                .isEqualTo(new Settlement(true, 3, 2, 8));
        assertThat(remaining(l)).isEqualTo(8);
    }

    @Test
    void slidingWindowGivesBackInTheCurrentOrPreviousWindow() {
        Limit l = Limit.slidingWindow(10, Duration.ofMinutes(1));
        assertThat(reserve(l, 4, "a").remaining()).isEqualTo(6);
        assertThat(rl.settle(key, l, "a", 6)).isEqualTo(new Settlement(true, 4, 2, 4));

        assertThat(reserve(l, 2, "b").remaining()).isEqualTo(2); // window k holds 8
        ticker.advance(Duration.ofSeconds(90)); // window k + 1, half way: the previous 8 weigh 4
        assertThat(remaining(l)).isEqualTo(6);
        assertThat(rl.settle(key, l, "b", 0))
                .as("off the previous window: 6 weigh 3")
                .isEqualTo(new Settlement(true, 2, -2, 7));
        assertThat(reserve(l, 1, "c").remaining()).isEqualTo(6);
        ticker.advance(Duration.ofMinutes(2)); // window k + 3: c's window is k + 1, two behind
        assertThat(rl.settle(key, l, "c", 0))
                .as("its window is older than the previous")
                .isEqualTo(new Settlement(true, 1, 0, 10));
    }

    @Test
    void slidingLogGivesBackFromTheReservationsOwnEntry() {
        Limit l = Limit.slidingLog(10, Duration.ofMinutes(1));
        assertThat(reserve(l, 4, "a").remaining()).isEqualTo(6);
        ticker.advance(Duration.ofSeconds(10));
        assertThat(reserve(l, 2, "b").remaining()).isEqualTo(4);
        ticker.advance(Duration.ofSeconds(10));
        assertThat(rl.settle(key, l, "a", 1)).isEqualTo(new Settlement(true, 4, -3, 7));
        assertThat(rl.settle(key, l, "b", 5)).as("logged now").isEqualTo(new Settlement(true, 2, 3, 4));
        assertThat(logOf(l)).containsExactly(T, 1L, T + 10_000_000_000L, 2L, T + 20_000_000_000L, 3L);

        ticker.set(T + 60_000_000_000L); // a's entry slid out
        assertThat(remaining(l)).isEqualTo(5);
        assertThat(reserve(l, 5, "c").remaining()).isZero();
        assertThat(rl.settle(key, l, "c", 0)).as("the whole entry goes").isEqualTo(new Settlement(true, 5, -5, 5));
        assertThat(logOf(l)).containsExactly(T + 10_000_000_000L, 2L, T + 20_000_000_000L, 3L);

        assertThat(reserve(l, 2, "d").allowed()).isTrue();
        ticker.advance(Duration.ofMinutes(1));
        assertThat(rl.settle(key, l, "d", 0))
                .as("slid out: nothing to give back")
                .isEqualTo(new Settlement(true, 2, 0, 10));
    }

    /** The log's entries as time, cost, time, cost, … */
    private List<Long> logOf(Limit l) {
        List<Long> out = new ArrayList<>();
        int n = TestDatabase.queryLong(
                        "select coalesce(array_length(at_ns, 1), 0) from sluice_log"
                                + " where key_hash = sluice_key_hash(?) and limit_id = ?",
                        key,
                        l.identity())
                .intValue();
        for (int i = 1; i <= n; i++) {
            out.add(TestDatabase.queryLong(
                    "select at_ns[" + i + "] from sluice_log" + " where key_hash = sluice_key_hash(?) and limit_id = ?",
                    key,
                    l.identity()));
            out.add(TestDatabase.queryLong(
                    "select costs[" + i + "] from sluice_log" + " where key_hash = sluice_key_hash(?) and limit_id = ?",
                    key,
                    l.identity()));
        }
        return out;
    }

    @Test
    void aReservationLeftUnsettledPastSettleWithinStandsAtItsEstimate() {
        Limit l = Limit.fixedWindow(10, Duration.ofHours(1));
        rl.tryAcquireEstimate(key, l, 4, "a", Duration.ofSeconds(10));
        ticker.advance(Duration.ofNanos(9_999_999_999L));
        assertThat(rl.tryAcquireEstimate(key, l, 1, "b", Duration.ofSeconds(10)).allowed())
                .isTrue();
        assertThat(rl.settle(key, l, "a", 0).settled())
                .as("still pending 1 ns before")
                .isTrue();
        ticker.advance(Duration.ofSeconds(10));
        assertThat(rl.settle(key, l, "b", 0)).as("settleWithin has passed").isEqualTo(Settlement.NOT_PENDING);
        assertThat(remaining(l)).as("b's estimate stands").isEqualTo(9);
        // an id whose reservation expired may be used again
        assertThat(rl.tryAcquireEstimate(key, l, 2, "b", HOUR).remaining()).isEqualTo(7);
        assertThat(rl.settle(key, l, "b", 1)).isEqualTo(new Settlement(true, 2, -1, 8));
    }

    @Test
    void anIdAlreadyPendingTakesNothingAndSaysWhatToDo() {
        Limit l = Limit.tokenBucket(10, Rate.perHour(10));
        reserve(l, 4, "req-1");
        assertThatThrownBy(() -> reserve(l, 1, "req-1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reservation 'req-1' is already pending on key '" + key + "'")
                .hasMessageContaining("use a new id per reservation");
        assertThatThrownBy(() ->
                        rl.tryAcquireEstimateAsync(key, l, 1, "req-1", HOUR).join())
                .hasCauseInstanceOf(IllegalArgumentException.class);
        assertThat(remaining(l)).as("nothing taken").isEqualTo(6);
        // a denied estimate with a pending id throws too: the id is wrong whatever the decision
        assertThatThrownBy(() -> reserve(l, 10, "req-1")).isInstanceOf(IllegalArgumentException.class);
        // the same id on another key, or another limit, is another reservation
        assertThat(rl.tryAcquireEstimate(key + ":2", l, 1, "req-1", HOUR).allowed())
                .isTrue();
        assertThat(reserve(Limit.tokenBucket(10, Rate.perHour(20)), 1, "req-1").allowed())
                .isTrue();
        assertThat(rl.settle(key, l, "req-1", 4)).isEqualTo(new Settlement(true, 4, 0, 6));
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsSent() {
        Limit l = Limit.fixedWindow(10, Duration.ofHours(1));
        reserve(l, 4, "a");
        long pending = pendingRows();
        assertThatThrownBy(() -> reserve(l, 1, "")).hasMessageContaining("reservation id is empty");
        assertThatThrownBy(() -> reserve(l, 1, "has space")).hasMessageContaining("'has space'");
        assertThatThrownBy(() -> reserve(l, 1, "x".repeat(129))).hasMessageContaining("129 characters");
        assertThatThrownBy(() -> rl.tryAcquireEstimate(key, l, 1, "b", Duration.ZERO))
                .hasMessageContaining("settleWithin PT0S is out of range");
        assertThatThrownBy(() -> rl.tryAcquireEstimate(key, l, 1, "b", Duration.ofHours(25)))
                .hasMessageContaining("settleWithin PT25H is out of range");
        assertThatThrownBy(() -> reserve(l, 0, "b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> reserve(l, 11, "b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> rl.tryAcquireEstimate(key + "\0", l, 1, "b", HOUR))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> rl.settle(key, l, "a", -1)).hasMessageContaining("actual cost -1 is out of range");
        assertThatThrownBy(() -> rl.settle(key, l, "a", 11)).hasMessageContaining("actual cost 11 is out of range");
        assertThatThrownBy(() -> rl.settleAsync(key, l, "", 1)).hasMessageContaining("reservation id is empty");
        assertThat(pendingRows()).isEqualTo(pending);
        assertThat(remaining(l)).isEqualTo(6);
        assertThat(rl.settle(key, l, "a", 4).settled()).as("still pending").isTrue();
        assertThat(rl.settle(key, l, "never", 4)).isEqualTo(Settlement.NOT_PENDING);
    }

    private long pendingRows() {
        return TestDatabase.queryLong("select count(*) from sluice_pending where key_hash = sluice_key_hash(?)", key);
    }

    @Test
    void theAsynchronousFormsAgree() {
        Limit l = Limit.slidingWindow(10, Duration.ofMinutes(1));
        Decision d = rl.tryAcquireEstimateAsync(key, l, 3, "a", HOUR).join();
        assertThat(d.allowed()).isTrue();
        assertThat(d.remaining()).isEqualTo(7);
        assertThat(rl.settleAsync(key, l, "a", 5).join()).isEqualTo(new Settlement(true, 3, 2, 5));
        assertThat(rl.settleAsync(key, l, "a", 5).join()).isEqualTo(Settlement.NOT_PENDING);
    }

    @Test
    void aNamedLimitWhoseNumbersChangedSettlesUnderTheNewOnes() {
        for (Limit[] pair : List.of(
                new Limit[] {Limit.tokenBucket(10, Rate.perHour(10)), Limit.tokenBucket(20, Rate.perHour(20))},
                new Limit[] {Limit.fixedWindow(10, Duration.ofMinutes(1)), Limit.fixedWindow(20, Duration.ofMinutes(1))
                },
                new Limit[] {Limit.slidingLog(10, Duration.ofMinutes(1)), Limit.slidingLog(20, Duration.ofMinutes(1))
                })) {
            Limit before = pair[0].named("api");
            Limit after = pair[1].named("api");
            assertThat(reserve(before, 4, "a").remaining()).isEqualTo(6);
            assertThat(rl.settle(key, after, "a", 1)).as("%s", after).isEqualTo(new Settlement(true, 4, -3, 19));
            assertThat(remaining(after)).isEqualTo(19);
        }
    }

    @Test
    void aReservationSettlesOnceHoweverManySettleAtOnce() throws Exception {
        Limit l = Limit.tokenBucket(100, Rate.perHour(100));
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < 5; round++) {
                String id = "r" + round;
                reserve(l, 10, id);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Settlement>> settles = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    settles.add(pool.submit(() -> {
                        go.await();
                        return rl.settle(key, l, id, 2);
                    }));
                }
                go.countDown();
                int settled = 0;
                for (Future<Settlement> f : settles) {
                    settled += f.get(30, TimeUnit.SECONDS).settled() ? 1 : 0;
                }
                assertThat(settled).isEqualTo(1);
            }
            assertThat(remaining(l))
                    .as("5 reservations of 10 settled at 2 each")
                    .isEqualTo(90);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Four limiters (as four processes would), so that the reservations race in the database, not in one queue. */
    @Test
    void oneIdReservedAtOnceByManyIsTakenOnce() throws Exception {
        Limit l = Limit.slidingLog(100, Duration.ofHours(1));
        int threads = 8;
        List<PostgresRateLimiter> limiters = new ArrayList<>(List.of(rl));
        for (int i = 0; i < 3; i++) {
            limiters.add(TestDatabase.builder(TestDatabase.dataSource())
                    .ticker(ticker)
                    .build());
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Boolean>> calls = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                PostgresRateLimiter one = limiters.get(i % limiters.size());
                calls.add(pool.submit(() -> {
                    go.await();
                    try {
                        return one.tryAcquireEstimate(key, l, 3, "same", HOUR).allowed();
                    } catch (IllegalArgumentException alreadyPending) {
                        return false;
                    }
                }));
            }
            go.countDown();
            int allowed = 0;
            for (Future<Boolean> f : calls) {
                allowed += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertThat(allowed).isEqualTo(1);
            assertThat(remaining(l)).isEqualTo(97);
        } finally {
            pool.shutdownNow();
            for (PostgresRateLimiter one : limiters.subList(1, limiters.size())) {
                one.close();
            }
        }
    }

    /** With batching on (the default) and off: alone, each is one statement. */
    @Test
    void anEstimateAndASettleAreOneStatementEach() {
        RoundTripTest.CountingDataSource ds = new RoundTripTest.CountingDataSource(TestDatabase.dataSource());
        List<Limit> limits = List.of(
                Limit.tokenBucket(10, Rate.perSecond(1)),
                Limit.fixedWindow(10, Duration.ofSeconds(10)),
                Limit.slidingWindow(10, Duration.ofSeconds(10)),
                Limit.slidingLog(10, Duration.ofSeconds(10)));
        for (boolean batching : List.of(true, false)) {
            key = "settle:" + UUID.randomUUID();
            try (PostgresRateLimiter counted =
                    TestDatabase.builder(ds).ticker(ticker).batching(batching).build()) {
                for (Limit l : limits) {
                    ds.calls.set(0);
                    counted.tryAcquireEstimate(key, l, 3, "a", HOUR);
                    assertThat(ds.calls.get()).as("estimate, %s", l).isEqualTo(1);
                    ds.calls.set(0);
                    assertThat(counted.settle(key, l, "a", 5).settled()).isTrue();
                    assertThat(ds.calls.get()).as("settle, %s", l).isEqualTo(1);
                    ds.calls.set(0);
                    assertThat(counted.settle(key, l, "a", 5).settled()).isFalse();
                    assertThat(ds.calls.get())
                            .as("settle of nothing pending, %s", l)
                            .isEqualTo(1);
                }
            }
        }
    }

    /**
     * Token-bucket estimates and settles join the batches as decisions do: queued behind a batch at the database, eight
     * calls on two keys (decisions, estimates, settles, a reused id, a settle of nothing pending) are one statement,
     * each answered as alone, in arrival order.
     */
    @Test
    void estimatesAndSettlesJoinTheBatches() throws Exception {
        BatchingTest.GatedDataSource gated = new BatchingTest.GatedDataSource();
        RoundTripTest.CountingDataSource counting = gated.target;
        Limit l = Limit.tokenBucket(10, Rate.perHour(10));
        try (PostgresRateLimiter b = gated.arm(TestDatabase.builder(gated).ticker(ticker))) {
            CompletableFuture<Decision> first = b.tryAcquireAsync(key, l, 1);
            assertThat(gated.waiting.await(1, TimeUnit.MINUTES)).isTrue(); // the dispatcher holds the first alone
            CompletableFuture<Decision> e1 = b.tryAcquireEstimateAsync(key, l, 3, "x", HOUR);
            CompletableFuture<Decision> a1 = b.tryAcquireAsync(key, l, 1);
            CompletableFuture<Settlement> s1 = b.settleAsync(key, l, "x", 1);
            CompletableFuture<Decision> e2 = b.tryAcquireEstimateAsync(key, l, 2, "y", HOUR);
            CompletableFuture<Decision> e3 = b.tryAcquireEstimateAsync(key, l, 2, "y", HOUR);
            CompletableFuture<Settlement> s2 = b.settleAsync(key, l, "nope", 1);
            CompletableFuture<Decision> a2 = b.tryAcquireAsync(key + ":other", l, 10);
            CompletableFuture<Settlement> s3 = b.settleAsync(key, l, "y", 2);
            gated.open.countDown();
            assertThat(first.get(1, TimeUnit.MINUTES).remaining()).isEqualTo(9);
            assertThat(e1.get(1, TimeUnit.MINUTES).remaining()).isEqualTo(6);
            assertThat(a1.get().remaining()).isEqualTo(5);
            assertThat(s1.get()).isEqualTo(new Settlement(true, 3, -2, 7));
            assertThat(e2.get().remaining()).isEqualTo(5);
            assertThatThrownBy(e3::get)
                    .hasCauseInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reservation 'y' is already pending");
            assertThat(s2.get()).isEqualTo(Settlement.NOT_PENDING);
            assertThat(a2.get().remaining()).isZero();
            assertThat(s3.get()).isEqualTo(new Settlement(true, 2, 0, 5));
            assertThat(counting.calls.get()).as("9 calls, 2 statements").isEqualTo(2);
            assertThat(b.peek(key, l, 1).remaining()).isEqualTo(5);
        }
    }

    @Test
    void aSettleOnAKeyWhoseRowWasResetStartsFromAFreshState() {
        Limit l = Limit.tokenBucket(10, Rate.perHour(10));
        reserve(l, 4, "a");
        rl.reset(key, l);
        assertThat(rl.settle(key, l, "a", 6)).isEqualTo(new Settlement(true, 4, 2, 8));
        reserve(l, 4, "b");
        rl.reset(key, l);
        assertThat(rl.settle(key, l, "b", 0)).as("a full bucket").isEqualTo(new Settlement(true, 4, 0, 10));
    }

    /**
     * Under SERIALIZABLE, two limiters (two processes) estimating and settling on one hot key conflict in the database
     * (40001, retried within the budget): every reservation is taken once and settled once, exactly.
     */
    @Test
    void twoLimitersSettlingOneKeyUnderSerializableStayExact() throws Exception {
        int each = 30;
        try (var serializable = TestDatabase.pool("set default_transaction_isolation = serializable", 8);
                PostgresRateLimiter one =
                        TestDatabase.builder(serializable).ticker(ticker).build();
                PostgresRateLimiter two =
                        TestDatabase.builder(serializable).ticker(ticker).build()) {
            for (Limit l : List.of(Limit.tokenBucket(1000, Rate.perHour(1000)), Limit.slidingLog(1000, HOUR))) {
                key = "settle:" + UUID.randomUUID();
                List<CompletableFuture<Settlement>> settles = new ArrayList<>();
                List<CompletableFuture<Decision>> estimates = new ArrayList<>();
                for (int i = 0; i < each; i++) {
                    estimates.add(one.tryAcquireEstimateAsync(key, l, 5, "one-" + i, HOUR));
                    estimates.add(two.tryAcquireEstimateAsync(key, l, 5, "two-" + i, HOUR));
                }
                for (CompletableFuture<Decision> f : estimates) {
                    assertThat(f.get(1, TimeUnit.MINUTES).allowed()).isTrue();
                }
                for (int i = 0; i < each; i++) { // each reservation settled by both: once
                    for (PostgresRateLimiter rl2 : List.of(one, two)) {
                        settles.add(rl2.settleAsync(key, l, "one-" + i, 2));
                        settles.add(rl2.settleAsync(key, l, "two-" + i, 2));
                    }
                }
                int settled = 0;
                for (CompletableFuture<Settlement> f : settles) {
                    Settlement s = f.get(1, TimeUnit.MINUTES);
                    if (s.settled()) {
                        settled++;
                        assertThat(s.adjusted()).isEqualTo(-3);
                    }
                }
                assertThat(settled).as("%s", l).isEqualTo(2 * each);
                assertThat(remaining(l)).as("%s", l).isEqualTo(1000 - 2 * each * 2);
            }
        }
    }

    @Test
    void settlesWorkUnderSerializable() {
        try (var serializable = TestDatabase.pool("set default_transaction_isolation = serializable", 4);
                PostgresRateLimiter s =
                        TestDatabase.builder(serializable).ticker(ticker).build()) {
            List<CompletableFuture<Settlement>> all = new ArrayList<>();
            Limit l = Limit.fixedWindow(100, Duration.ofHours(1));
            for (int i = 0; i < 20; i++) {
                s.tryAcquireEstimate(key, l, 5, "s" + i, HOUR);
            }
            for (int i = 0; i < 20; i++) {
                all.add(s.settleAsync(key, l, "s" + i, 2));
            }
            for (CompletableFuture<Settlement> f : all) {
                assertThat(f.join())
                        .isEqualTo(new Settlement(true, 5, -3, f.join().remaining()));
            }
            assertThat(remaining(l)).isEqualTo(60);
        }
    }

    @Test
    void theExpiryCleanerRemovesReservationsPastTheirSettleWithin() {
        String schema = "settle_" + UUID.randomUUID().toString().substring(0, 8);
        Limit l = Limit.fixedWindow(10, Duration.ofHours(1));
        try (PostgresRateLimiter s = TestDatabase.builder(TestDatabase.dataSource())
                .schema(schema)
                .ticker(ticker)
                .build()) {
            for (int i = 0; i < 5; i++) {
                s.tryAcquireEstimate("k" + i, l, 1, "short", Duration.ofSeconds(1));
            }
            s.tryAcquireEstimate("k0", l, 1, "long", HOUR);
            ExpiryCleaner cleaner = s.manualCleaner(2, 10);
            cleaner.sweep();
            assertThat(TestDatabase.queryLong("select count(*) from " + schema + ".sluice_pending"))
                    .isEqualTo(6);
            ticker.advance(Duration.ofMillis(999));
            cleaner.sweep();
            assertThat(TestDatabase.queryLong("select count(*) from " + schema + ".sluice_pending"))
                    .isEqualTo(6);
            ticker.advance(Duration.ofMillis(1));
            cleaner.sweep();
            assertThat(TestDatabase.queryLong("select count(*) from " + schema + ".sluice_pending"))
                    .isEqualTo(1);
            assertThat(s.settle("k0", l, "long", 0)).isEqualTo(new Settlement(true, 1, -1, 9));
        } finally {
            TestDatabase.execute("drop schema " + schema + " cascade");
        }
    }

    /** A database migrated by the release before issue 30 (files 001 to 006) is brought up to date by build(). */
    @Test
    void aSchemaOfThePreviousReleaseMigratesWhenALimiterIsBuilt() {
        String schema = "settle_" + UUID.randomUUID().toString().substring(0, 8);
        Limit l = Limit.fixedWindow(10, Duration.ofHours(1));
        try {
            for (String file : Migrations.FILES.subList(0, Migrations.FILES.indexOf("007_settle.sql"))) {
                TestDatabase.execute(Migrations.render(file, schema, Migrations.DEFAULT_PREFIX));
            }
            // a decision of that release: its state must survive the migration
            TestDatabase.execute("select * from " + schema + ".sluice_window_acquire(false, 'k', '" + l.identity()
                    + "', 3, " + T + ", " + l.periodNanos() + ", 10, null)");
            try (PostgresRateLimiter s = TestDatabase.builder(TestDatabase.dataSource())
                    .schema(schema)
                    .ticker(ticker)
                    .build()) {
                assertThat(s.schemaCreated()).isTrue();
                assertThat(s.peek("k", l, 1).remaining()).isEqualTo(7);
                assertThat(s.tryAcquireEstimate("k", l, 4, "a", HOUR).remaining())
                        .isEqualTo(3);
                assertThat(s.settle("k", l, "a", 1)).isEqualTo(new Settlement(true, 4, -3, 6));
                assertThat(s.migrate().nothingToDo()).isTrue();
            }
        } finally {
            TestDatabase.execute("drop schema if exists " + schema + " cascade");
        }
    }
}
