package dev.sluice.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Decision;
import dev.sluice.InFlightLimiter;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Work in flight ({@link RateLimiter#inFlight()}): at most the maximum held at once, exactly, under concurrency; a
 * holder's retry renews its slot; a release frees only its holder's slot, once; a lease ends by the store's clock
 * ({@link ManualTicker}), not one microsecond before; lowering the maximum evicts nobody. Each scenario runs through
 * the synchronous view and, on a key of its own, through the asynchronous one. Part of {@link RateLimiterTck}: every
 * store runs it.
 */
public interface InFlightTck extends StoreUnderTest {

    Duration LEASE = Duration.ofSeconds(10);

    /** One of the two views of an {@link InFlightLimiter}: the scenarios run through both. */
    interface View {
        Decision acquire(String key, long max, String holder, Duration lease);

        boolean release(String key, String holder);

        boolean renew(String key, String holder, Duration lease);
    }

    private static View view(InFlightLimiter slots, boolean async) {
        if (!async) {
            return new View() {
                @Override
                public Decision acquire(String key, long max, String holder, Duration lease) {
                    return slots.tryAcquire(key, max, holder, lease);
                }

                @Override
                public boolean release(String key, String holder) {
                    return slots.release(key, holder);
                }

                @Override
                public boolean renew(String key, String holder, Duration lease) {
                    return slots.renew(key, holder, lease);
                }
            };
        }
        return new View() {
            @Override
            public Decision acquire(String key, long max, String holder, Duration lease) {
                return join(slots.tryAcquireAsync(key, max, holder, lease));
            }

            @Override
            public boolean release(String key, String holder) {
                return join(slots.releaseAsync(key, holder));
            }

            @Override
            public boolean renew(String key, String holder, Duration lease) {
                return join(slots.renewAsync(key, holder, lease));
            }
        };
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.get(1, TimeUnit.MINUTES);
        } catch (Exception e) {
            throw new AssertionError("the asynchronous view failed", e);
        }
    }

    /** Runs {@code scenario} on a fresh ticker and limiter, once per view. */
    private void bothViews(Scenario scenario) throws Exception {
        for (boolean async : new boolean[] {false, true}) {
            ManualTicker t = Tck.ticker();
            try (RateLimiter rl = newLimiter(t)) {
                scenario.run(view(rl.inFlight(), async), t, Tck.key(async ? "slots-async" : "slots"));
            }
        }
    }

    interface Scenario {
        void run(View v, ManualTicker t, String key) throws Exception;
    }

    @Test
    default void atMostMaxAreHeldAndEachDecisionSaysWhatIsLeft() throws Exception {
        bothViews((v, t, key) -> {
            assertThat(v.acquire(key, 3, "a", LEASE)).isEqualTo(Expect.allowed(3, 2, LEASE.toNanos()));
            t.advance(Duration.ofSeconds(2));
            assertThat(v.acquire(key, 3, "b", Duration.ofSeconds(30))).isEqualTo(Expect.allowed(3, 1, Tck.s(30)));
            assertThat(v.acquire(key, 3, "c", Duration.ofSeconds(1))).isEqualTo(Expect.allowed(3, 0, Tck.s(30)));
            // denied: retry when the earliest lease (c's, 1 s) ends; reset when the latest (b's, 30 s) ends
            assertThat(v.acquire(key, 3, "d", LEASE)).isEqualTo(Expect.denied(3, 0, Tck.s(1), Tck.s(30)));
            t.advance(Duration.ofSeconds(1));
            // c's lease ended: d takes its slot; the earliest held now is a's (10 s from T0)
            assertThat(v.acquire(key, 3, "d", LEASE)).isEqualTo(Expect.allowed(3, 0, Tck.s(30 - 1)));
            assertThat(v.acquire(key, 3, "e", LEASE)).isEqualTo(Expect.denied(3, 0, Tck.s(10 - 3), Tck.s(29)));
        });
    }

    @Test
    default void aHolderAcquiringAgainRenewsItsSlotWithoutTakingASecond() throws Exception {
        bothViews((v, t, key) -> {
            assertThat(v.acquire(key, 2, "a", LEASE).remaining()).isEqualTo(1);
            t.advance(Duration.ofSeconds(5));
            assertThat(v.acquire(key, 2, "a", LEASE)).isEqualTo(Expect.allowed(2, 1, LEASE.toNanos()));
            assertThat(v.acquire(key, 2, "b", LEASE).remaining()).isZero();
            assertThat(v.acquire(key, 2, "c", LEASE).allowed()).isFalse();
            t.advance(Duration.ofSeconds(6)); // 11 s after a's first acquire: its renewed lease still holds
            assertThat(v.acquire(key, 2, "c", LEASE)).isEqualTo(Expect.denied(2, 0, Tck.s(4), Tck.s(4)));
            // a holder already holding is allowed even when the key is full: a retried acquire is safe
            assertThat(v.acquire(key, 2, "b", LEASE)).isEqualTo(Expect.allowed(2, 0, LEASE.toNanos()));
        });
    }

    @Test
    default void releaseIsIdempotentAndNeverFreesAnotherHoldersSlot() throws Exception {
        bothViews((v, t, key) -> {
            assertThat(v.release(key, "a")).as("never held").isFalse();
            assertThat(v.acquire(key, 1, "a", LEASE).allowed()).isTrue();
            assertThat(v.release(key, "b")).as("b holds nothing").isFalse();
            assertThat(v.acquire(key, 1, "c", LEASE).allowed())
                    .as("a still holds the only slot")
                    .isFalse();
            assertThat(v.release(key, "a")).isTrue();
            assertThat(v.release(key, "a")).as("released already").isFalse();
            assertThat(v.acquire(key, 1, "c", LEASE)).isEqualTo(Expect.allowed(1, 0, LEASE.toNanos()));
            assertThat(v.release(key, "a"))
                    .as("a's release again, while c holds")
                    .isFalse();
            assertThat(v.acquire(key, 1, "d", LEASE).allowed())
                    .as("c still holds")
                    .isFalse();
        });
    }

    @Test
    default void aLeaseEndsByTheStoreClockAndNotOneMicrosecondBefore() throws Exception {
        bothViews((v, t, key) -> {
            assertThat(v.acquire(key, 1, "dies", LEASE).allowed()).isTrue();
            t.advanceNanos(LEASE.toNanos() - Tck.MICRO);
            assertThat(v.acquire(key, 1, "next", LEASE)).isEqualTo(Expect.denied(1, 0, Tck.MICRO, Tck.MICRO));
            t.advanceNanos(Tck.MICRO);
            assertThat(v.acquire(key, 1, "next", LEASE)).isEqualTo(Expect.allowed(1, 0, LEASE.toNanos()));
            assertThat(v.release(key, "dies"))
                    .as("its lease ended: nothing to release")
                    .isFalse();
            assertThat(v.renew(key, "dies", LEASE))
                    .as("its lease ended: nothing to renew")
                    .isFalse();
            assertThat(v.acquire(key, 1, "other", LEASE).allowed())
                    .as("next still holds")
                    .isFalse();
        });
    }

    @Test
    default void renewExtendsAHeldLeaseFromNow() throws Exception {
        bothViews((v, t, key) -> {
            assertThat(v.renew(key, "a", LEASE)).as("never held").isFalse();
            assertThat(v.acquire(key, 1, "a", LEASE).allowed()).isTrue();
            t.advance(Duration.ofSeconds(8));
            assertThat(v.renew(key, "a", Duration.ofSeconds(20))).isTrue();
            t.advance(Duration.ofSeconds(15)); // 23 s: past the first lease, within the renewed one
            assertThat(v.acquire(key, 1, "b", LEASE)).isEqualTo(Expect.denied(1, 0, Tck.s(5), Tck.s(5)));
            assertThat(v.renew(key, "b", LEASE))
                    .as("b was denied: it holds nothing")
                    .isFalse();
            t.advance(Duration.ofSeconds(5));
            assertThat(v.renew(key, "a", LEASE))
                    .as("the renewed lease ended too")
                    .isFalse();
            assertThat(v.acquire(key, 1, "b", LEASE).allowed()).isTrue();
        });
    }

    @Test
    default void loweringTheMaximumEvictsNobody() throws Exception {
        bothViews((v, t, key) -> {
            for (String h : List.of("a", "b", "c")) {
                assertThat(v.acquire(key, 3, h, LEASE).allowed()).isTrue();
            }
            assertThat(v.acquire(key, 2, "d", LEASE)).isEqualTo(Expect.denied(2, 0, LEASE.toNanos(), LEASE.toNanos()));
            assertThat(v.acquire(key, 2, "a", LEASE).allowed())
                    .as("a holds: its retry renews")
                    .isTrue();
            assertThat(v.release(key, "a")).isTrue();
            assertThat(v.acquire(key, 2, "d", LEASE).allowed())
                    .as("2 held under a maximum of 2")
                    .isFalse();
            assertThat(v.release(key, "b")).isTrue();
            assertThat(v.acquire(key, 2, "d", LEASE)).isEqualTo(Expect.allowed(2, 0, LEASE.toNanos()));
            assertThat(v.release(key, "c")).as("c was never evicted").isTrue();
        });
    }

    @Test
    default void inFlightKeysAreApartFromRateLimitKeys() throws Exception {
        ManualTicker t = Tck.ticker();
        try (RateLimiter rl = newLimiter(t)) {
            String key = Tck.key("both");
            Limit limit = Limit.fixedWindow(1, Duration.ofHours(1));
            assertThat(rl.inFlight().tryAcquire(key, 1, "a", LEASE).allowed()).isTrue();
            assertThat(rl.tryAcquire(key, limit).allowed())
                    .as("the rate limit's own state")
                    .isTrue();
            assertThat(rl.tryAcquire(key, limit).allowed()).isFalse();
            rl.reset(key, limit);
            assertThat(rl.inFlight().tryAcquire(key, 1, "b", LEASE).allowed())
                    .as("a reset leaves slots")
                    .isFalse();
            assertThat(rl.inFlight().release(key, "a")).isTrue();
            assertThat(rl.peek(key, limit).remaining())
                    .as("a release leaves the rate limit")
                    .isEqualTo(1);
        }
    }

    @Test
    default void badInputNamesTheValueAndChangesNothing() throws Exception {
        ManualTicker t = Tck.ticker();
        try (RateLimiter rl = newLimiter(t)) {
            InFlightLimiter s = rl.inFlight();
            String key = Tck.key("bad");
            assertThat(s.tryAcquire(key, 2, "a", LEASE).allowed()).isTrue();
            assertThatThrownBy(() -> s.tryAcquire(key, 0, "b", LEASE))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("maxInFlight 0");
            assertThatThrownBy(() -> s.tryAcquire(key, -3, "b", LEASE)).hasMessageContaining("-3");
            assertThatThrownBy(() -> s.tryAcquire("", 2, "b", LEASE))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("key \"\"");
            assertThatThrownBy(() -> s.tryAcquire(key, 2, "", LEASE))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("holder id is empty");
            assertThatThrownBy(() -> s.tryAcquire(key, 2, "has space", LEASE))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'has space'");
            assertThatThrownBy(() -> s.tryAcquire(key, 2, "b", Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease PT0S");
            assertThatThrownBy(() -> s.tryAcquireAsync(key, 2, "b", Duration.ofHours(25)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease PT25H");
            assertThatThrownBy(() -> s.renew(key, "a", Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lease PT-0.001S");
            assertThatThrownBy(() -> s.releaseAsync(key, "x".repeat(200)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("200 characters");
            assertThatThrownBy(() -> s.renewAsync("", "a", LEASE)).isInstanceOf(IllegalArgumentException.class);
            assertThat(s.tryAcquire(key, 2, "a", LEASE))
                    .as("nothing changed: a still holds its one slot")
                    .isEqualTo(Expect.allowed(2, 1, LEASE.toNanos()));
        }
    }

    /**
     * Threads on one key with time frozen: first each tries to take slots for holders of its own and keeps them, and
     * exactly {@code max} are admitted; then they churn (acquire, work, release) and the holders counted between an
     * admission and its release are never more than {@code max}.
     */
    @Test
    default void theMaximumHoldsExactlyUnderConcurrency() throws Exception {
        int threads = concurrencyThreads();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            InFlightLimiter s = rl.inFlight();
            for (int round = 0; round < concurrencyRounds(); round++) {
                String key = Tck.key("contended");
                long max = 5L + round % 7;
                boolean async = round % 2 == 1;
                View v = view(s, async);
                AtomicLong admitted = new AtomicLong();
                int attempts = (int) (2 * max / threads) + 3;
                run(pool, threads, thread -> {
                    for (int a = 0; a < attempts; a++) {
                        if (v.acquire(key, max, "keep-" + thread + "-" + a, LEASE)
                                .allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                });
                assertThat(admitted.get()).as("round %d, max %d", round, max).isEqualTo(max);
                for (int thread = 0; thread < threads; thread++) {
                    for (int a = 0; a < attempts; a++) {
                        v.release(key, "keep-" + thread + "-" + a);
                    }
                }
                AtomicInteger holding = new AtomicInteger();
                AtomicInteger most = new AtomicInteger();
                AtomicLong churned = new AtomicLong();
                run(pool, threads, thread -> {
                    for (int a = 0; a < 20; a++) {
                        String holder = "churn-" + thread + "-" + a;
                        if (v.acquire(key, max, holder, LEASE).allowed()) {
                            most.accumulateAndGet(holding.incrementAndGet(), Math::max);
                            churned.incrementAndGet();
                            holding.decrementAndGet();
                            assertThat(v.release(key, holder))
                                    .as("its own slot")
                                    .isTrue();
                        }
                    }
                });
                assertThat(most.get()).as("round %d: held at once", round).isBetween(1, (int) max);
                assertThat(churned.get()).isPositive();
                assertThat(v.acquire(key, max, "last", LEASE))
                        .as("every slot was released")
                        .isEqualTo(Expect.allowed(max, max - 1, LEASE.toNanos()));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void run(ExecutorService pool, int threads, ThreadBody body) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int thread = i;
            done.add(pool.submit(() -> {
                start.await();
                body.run(thread);
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : done) {
            f.get(2, TimeUnit.MINUTES);
        }
    }

    interface ThreadBody {
        void run(int thread) throws Exception;
    }

    /**
     * Random acquires, releases and renewals over two keys and a few holders, with random leases and time steps
     * (whole microseconds), against the store and {@link ReferenceInFlight}: every answer must be identical.
     */
    @Test
    default void randomSequencesAnswerExactlyLikeTheReference() throws Exception {
        long seed = System.nanoTime();
        for (boolean async : new boolean[] {false, true}) {
            SplittableRandom random = new SplittableRandom(seed);
            ManualTicker t = Tck.ticker();
            InFlightLimiter reference = new ReferenceInFlight(t);
            try (RateLimiter rl = newLimiter(t)) {
                View v = view(rl.inFlight(), async);
                List<String> keys = List.of(Tck.key("random-a"), Tck.key("random-b"));
                for (int step = 0; step < differentialSteps(); step++) {
                    t.advanceNanos(random.nextLong(0, 3_000) * Tck.MICRO * (random.nextInt(4) == 0 ? 1_000 : 1));
                    int k = random.nextInt(keys.size());
                    String holder = "h" + random.nextInt(6);
                    Duration lease = Duration.ofNanos(random.nextLong(1, 5_000_000) * Tck.MICRO);
                    String where = "seed " + seed + ", step " + step + (async ? ", async" : "");
                    switch (random.nextInt(4)) {
                        case 0, 1 -> {
                            long max = 1L + random.nextInt(4);
                            assertThat(v.acquire(keys.get(k), max, holder, lease))
                                    .as(where)
                                    .isEqualTo(reference.tryAcquire("k" + k, max, holder, lease));
                        }
                        case 2 ->
                            assertThat(v.release(keys.get(k), holder))
                                    .as(where)
                                    .isEqualTo(reference.release("k" + k, holder));
                        default ->
                            assertThat(v.renew(keys.get(k), holder, lease))
                                    .as(where)
                                    .isEqualTo(reference.renew("k" + k, holder, lease));
                    }
                }
            }
        }
    }
}
