package dev.sluice.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The batching policy over a store whose calls complete when the test says so: which decisions go alone, which wait,
 * and with whom they go, known exactly.
 */
class BatchingTest {

    /** A decision: its key and its answer (the index of the call it went in). */
    record Call(String key, CompletableFuture<Integer> answer) implements Batching.Member {
        Call(String key) {
            this(key, new CompletableFuture<>());
        }

        @Override
        public Object batchKey() {
            return key;
        }

        @Override
        public boolean isDone() {
            return answer.isDone();
        }

        @Override
        public void fail(Throwable error) {
            answer.completeExceptionally(error);
        }
    }

    /** A store whose calls stay at the store until {@link #answer} completes them, in any order. */
    static final class HeldStore implements Batching.Sender<Call> {
        final List<List<Call>> sent = new ArrayList<>();
        final List<CompletableFuture<Void>> calls = new ArrayList<>();

        @Override
        public synchronized CompletionStage<?> send(List<Call> batch) {
            int index = sent.size();
            sent.add(List.copyOf(batch));
            CompletableFuture<Void> call = new CompletableFuture<>();
            calls.add(call);
            return call.thenRun(() -> batch.forEach(c -> c.answer.complete(index)));
        }

        void answer(int call) {
            CompletableFuture<Void> c;
            synchronized (this) {
                c = calls.get(call);
            }
            c.complete(null);
        }

        synchronized List<String> keysOf(int call) {
            return sent.get(call).stream().map(Call::key).toList();
        }

        synchronized int calls() {
            return sent.size();
        }
    }

    @Test
    void aLoneDecisionGoesAtOnceAndBatchesFormOnlyPastMaxInFlight() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(2, 3, 100, store);
        Call a = new Call("a");
        Call c = new Call("c");
        b.submit(a);
        b.submit(c);
        assertThat(store.calls()).as("two calls out, each alone").isEqualTo(2);
        List<Call> queued = new ArrayList<>();
        for (String k : List.of("d", "e", "f", "g")) {
            Call q = new Call(k);
            queued.add(q);
            b.submit(q);
        }
        assertThat(store.calls()).as("past maxInFlight: queued").isEqualTo(2);
        assertThat(b.queued()).isEqualTo(4);
        store.answer(0);
        assertThat(a.answer).isCompletedWithValue(0);
        assertThat(store.keysOf(2))
                .as("the next completion sends what is queued, up to maxBatch, in order")
                .containsExactly("d", "e", "f");
        store.answer(1);
        assertThat(store.keysOf(3)).containsExactly("g");
        store.answer(2);
        store.answer(3);
        assertThat(queued).allSatisfy(q -> assertThat(q.answer).isDone());
        assertThat(b.inFlight()).isZero();
    }

    @Test
    void aKeyIsInOneInFlightCallAtATime() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(6, 64, 100, store);
        b.submit(new Call("hot"));
        b.submit(new Call("hot"));
        b.submit(new Call("cold"));
        b.submit(new Call("hot"));
        assertThat(store.calls())
                .as("hot is at the store: its next decisions wait though calls are free")
                .isEqualTo(2);
        assertThat(store.keysOf(0)).containsExactly("hot");
        assertThat(store.keysOf(1)).containsExactly("cold");
        store.answer(1);
        assertThat(store.calls()).as("cold's completion does not free hot").isEqualTo(2);
        store.answer(0);
        assertThat(store.keysOf(2))
                .as("both waiting decisions on hot share the next call")
                .containsExactly("hot", "hot");
        b.submit(new Call("other"));
        b.submit(new Call("hot"));
        assertThat(store.keysOf(3)).containsExactly("other");
        assertThat(store.calls()).isEqualTo(4);
        store.answer(2);
        assertThat(store.keysOf(4)).containsExactly("hot");
    }

    @Test
    void aCapPerKeyLeavesTheRestOfAHotKeysDecisionsForTheNextCall() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(1, 64, 2, 100, store);
        b.submit(new Call("other"));
        for (String k : List.of("hot", "hot", "cold", "hot", "hot")) {
            b.submit(new Call(k));
        }
        store.answer(0);
        assertThat(store.keysOf(1)).containsExactly("hot", "hot", "cold");
        store.answer(1);
        assertThat(store.keysOf(2)).containsExactly("hot", "hot");
    }

    @Test
    void aWaitingDecisionKeepsItsPlaceBehindItsKeyWhileOthersPass() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(1, 64, 100, store);
        b.submit(new Call("x"));
        for (String k : List.of("x", "y", "x", "z")) {
            b.submit(new Call(k));
        }
        store.answer(0);
        assertThat(store.keysOf(1)).containsExactly("x", "y", "x", "z");
    }

    @Test
    void aDecisionDoneWhileQueuedIsNeverSent() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(1, 64, 100, store);
        b.submit(new Call("a"));
        Call expired = new Call("b");
        Call live = new Call("c");
        b.submit(expired);
        b.submit(live);
        expired.answer.completeExceptionally(new IllegalStateException("budget spent"));
        store.answer(0);
        assertThat(store.keysOf(1)).containsExactly("c");
    }

    @Test
    void theQueueIsBounded() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(1, 64, 2, store);
        assertThat(b.submit(new Call("a"))).isEqualTo(Batching.Admission.ACCEPTED);
        assertThat(b.submit(new Call("b"))).isEqualTo(Batching.Admission.ACCEPTED);
        assertThat(b.submit(new Call("c"))).isEqualTo(Batching.Admission.ACCEPTED);
        assertThat(b.submit(new Call("d"))).isEqualTo(Batching.Admission.QUEUE_FULL);
        assertThat(b.queued()).isEqualTo(2);
    }

    @Test
    void aFailedCallFailsEachOfItsMembersAndFreesItsKeys() {
        RuntimeException down = new IllegalStateException("connection lost");
        AtomicInteger sends = new AtomicInteger();
        CompletableFuture<Void> first = new CompletableFuture<>();
        Batching<Call> b = new Batching<>(1, 64, 100, batch -> {
            if (sends.getAndIncrement() == 0) {
                return first;
            }
            throw down;
        });
        Call a = new Call("a");
        Call q1 = new Call("a");
        Call q2 = new Call("b");
        b.submit(a);
        b.submit(q1);
        b.submit(q2);
        first.completeExceptionally(down);
        assertThat(a.answer).isCompletedExceptionally();
        assertThat(q1.answer).as("sent as one batch whose send threw").isCompletedExceptionally();
        assertThat(q2.answer).isCompletedExceptionally();
        assertThat(b.inFlight()).isZero();
        Call after = new Call("a");
        b.submit(after);
        assertThat(sends.get()).as("the key is free again").isEqualTo(3);
    }

    @Test
    void closeFailsWhatIsQueuedAndWhatComesAfter() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(1, 64, 100, store);
        Call out = new Call("a");
        Call queued = new Call("b");
        b.submit(out);
        b.submit(queued);
        IllegalStateException closed = new IllegalStateException("closed");
        b.close(closed);
        assertThat(queued.answer).isCompletedExceptionally();
        Call late = new Call("c");
        b.submit(late);
        assertThat(late.answer).isCompletedExceptionally();
        store.answer(0);
        assertThat(out.answer).isCompletedWithValue(0);
        assertThat(store.calls()).isEqualTo(1);
    }

    /**
     * Many threads on few keys over a store that completes on other threads: no key is ever in two calls at once,
     * every decision is answered once, and no more than maxInFlight calls are ever out.
     */
    @Test
    void underConcurrencyNoKeyIsEverInTwoCallsAndEveryDecisionIsAnswered() throws Exception {
        ExecutorService storeThreads = Executors.newFixedThreadPool(3);
        ConcurrentHashMap<Object, Boolean> atStore = new ConcurrentHashMap<>();
        AtomicInteger out = new AtomicInteger();
        AtomicInteger maxOut = new AtomicInteger();
        AtomicLong races = new AtomicLong();
        Batching<Call> b = new Batching<>(
                4,
                16,
                1_000_000,
                batch -> CompletableFuture.runAsync(
                        () -> {
                            maxOut.accumulateAndGet(out.incrementAndGet(), Math::max);
                            List<String> keys =
                                    batch.stream().map(Call::key).distinct().toList();
                            for (String k : keys) {
                                if (atStore.putIfAbsent(k, true) != null) {
                                    races.incrementAndGet();
                                }
                            }
                            Thread.onSpinWait();
                            keys.forEach(atStore::remove);
                            out.decrementAndGet();
                            batch.forEach(c -> c.answer.complete(1));
                        },
                        storeThreads));
        int threads = 4;
        int perThread = 5_000;
        List<Call> all = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            List<Call> mine = new ArrayList<>();
            for (int i = 0; i < perThread; i++) {
                mine.add(new Call("k" + (i % 3)));
            }
            all.addAll(mine);
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                mine.forEach(b::submit);
            });
            callers.add(th);
            th.start();
        }
        go.countDown();
        for (Thread th : callers) {
            th.join(TimeUnit.SECONDS.toMillis(30));
        }
        for (Call c : all) {
            assertThat(c.answer.get(30, TimeUnit.SECONDS)).isEqualTo(1);
        }
        storeThreads.shutdown();
        assertThat(races.get()).as("a key in two calls at once").isZero();
        assertThat(maxOut.get()).isLessThanOrEqualTo(4);
        assertThat(b.inFlight()).isZero();
        assertThat(b.queued()).isZero();
    }
}
