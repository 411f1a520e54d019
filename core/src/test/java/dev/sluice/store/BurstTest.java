package dev.sluice.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.store.BatchingTest.Call;
import dev.sluice.store.BatchingTest.HeldStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A thread's burst: what it holds, when it sends it, and with whom. */
class BurstTest {

    @AfterEach
    void noBurstLeftOpen() {
        Burst.end(); // a failed test must not leave this thread's burst open for the next one
    }

    @Test
    void decisionsOfABurstAreHeldAndSentTogetherWhenItEnds() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(6, 64, 100, store);
        assertThat(Burst.begin()).isTrue();
        List<Call> calls = List.of(new Call("a"), new Call("b"), new Call("c"), new Call("d"));
        calls.forEach(b::submit);
        assertThat(store.calls()).as("nothing goes while the burst is open").isZero();
        assertThat(b.queued()).isEqualTo(4);

        Burst.end();
        assertThat(store.calls())
                .as("one call for the whole burst, though six could be in flight")
                .isEqualTo(1);
        assertThat(store.keysOf(0)).containsExactly("a", "b", "c", "d");
        store.answer(0);
        assertThat(calls).allSatisfy(c -> assertThat(c.answer()).isCompletedWithValue(0));

        Call after = new Call("e");
        b.submit(after);
        assertThat(store.calls())
                .as("after the burst a decision goes at once again")
                .isEqualTo(2);
        assertThat(store.keysOf(1)).containsExactly("e");
    }

    @Test
    void aBurstEndsForEveryPolicyItHeldDecisionsOf() {
        HeldStore redis = new HeldStore();
        HeldStore postgres = new HeldStore();
        Batching<Call> one = new Batching<>(6, 64, 100, redis);
        Batching<Call> other = new Batching<>(6, 64, 100, postgres);
        Burst.begin();
        one.submit(new Call("a"));
        other.submit(new Call("b"));
        one.submit(new Call("c"));
        Burst.end();
        assertThat(redis.calls()).isEqualTo(1);
        assertThat(redis.keysOf(0)).containsExactly("a", "c");
        assertThat(postgres.calls()).isEqualTo(1);
        assertThat(postgres.keysOf(0)).containsExactly("b");
    }

    @Test
    void onlyTheCallThatOpenedABurstEndsIt() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(6, 64, 100, store);
        assertThat(Burst.begin()).isTrue();
        assertThat(Burst.begin()).as("a nested begin opens nothing").isFalse();
        b.submit(new Call("a"));
        assertThat(store.calls()).isZero();
        Burst.end();
        assertThat(store.calls()).isEqualTo(1);
        Burst.end(); // nothing open: nothing to send
        assertThat(store.calls()).isEqualTo(1);
    }

    @Test
    void aBurstLargerThanABatchGoesAsSeveralWithinMaxInFlightAndTheRestWithTheNextAnswer() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(2, 3, 100, store);
        Burst.begin();
        for (int i = 0; i < 8; i++) {
            b.submit(new Call("k" + i));
        }
        Burst.end();
        assertThat(store.calls()).as("two calls in flight at most").isEqualTo(2);
        assertThat(store.keysOf(0)).containsExactly("k0", "k1", "k2");
        assertThat(store.keysOf(1)).containsExactly("k3", "k4", "k5");
        store.answer(0);
        assertThat(store.calls()).isEqualTo(3);
        assertThat(store.keysOf(2)).containsExactly("k6", "k7");
    }

    @Test
    void aKeyTwiceInABurstSharesItsCallAndAKeyInFlightWaitsForItsCall() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(6, 64, 100, store);
        b.submit(new Call("hot")); // at the store, outside any burst
        Burst.begin();
        b.submit(new Call("hot"));
        b.submit(new Call("cold"));
        b.submit(new Call("cold"));
        Burst.end();
        assertThat(store.calls()).isEqualTo(2);
        assertThat(store.keysOf(1)).containsExactly("cold", "cold");
        store.answer(0);
        assertThat(store.keysOf(2)).containsExactly("hot");
    }

    @Test
    void aThreadThatWaitsInsideItsOwnBurstSendsWhatItHoldsFirst() throws Exception {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(6, 64, 100, store);
        Burst.begin();
        Call held = new Call("a");
        b.submit(held);
        CompletableFuture<Integer> answered = held.answer();
        // the store answers as soon as the call is sent: the wait must send it, or it would run into its budget
        CompletableFuture<?> unused = CompletableFuture.runAsync(() -> {
            while (store.calls() == 0) {
                Thread.onSpinWait();
            }
            store.answer(0);
        });
        TimeBudget budget = TimeBudget.of(Duration.ofSeconds(10));
        int got = budget.await(answered, budget.deadline(), TimeBudget.Patience.NONE, f -> f.cancel(false));
        assertThat(got).isZero();
        assertThat(store.calls()).isEqualTo(1);

        Call next = new Call("b");
        b.submit(next);
        assertThat(store.calls()).as("the burst stays open after the wait").isEqualTo(1);
        Burst.end();
        assertThat(store.calls()).isEqualTo(2);
    }

    @Test
    void aSynchronousViewJoiningInsideItsOwnBurstSendsWhatItHoldsFirst() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(6, 64, 100, store);
        Burst.begin();
        Call held = new Call("a");
        b.submit(held);
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); // hang guard: never sent fails the join
        CompletableFuture<?> unused = CompletableFuture.runAsync(() -> {
            while (store.calls() == 0 && System.nanoTime() - giveUp < 0) {
                Thread.onSpinWait();
            }
            if (store.calls() == 0) {
                held.fail(new IllegalStateException("the held decision was never sent"));
            } else {
                store.answer(0);
            }
        });
        assertThat(Futures.join(held.answer())).isZero();
    }

    @Test
    void aClosedPolicySendsNothingAtTheEndOfABurst() {
        HeldStore store = new HeldStore();
        Batching<Call> b = new Batching<>(6, 64, 100, store);
        Burst.begin();
        Call held = new Call("a");
        b.submit(held);
        b.close(new IllegalStateException("closed"));
        Burst.end();
        assertThat(store.calls()).isZero();
        assertThat(held.answer()).isCompletedExceptionally();
    }
}
