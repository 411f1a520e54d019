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

/**
 * A thread's burst: what it holds, when it sends it, and with whom. A burst holds a decision only while a call of
 * its limiter is at the store; so most tests first put one there ({@link #busy}), outside any burst.
 */
class BurstTest {
    /** A store whose calls stay there until the test answers them, and its policy: 6 calls in flight, 64 a batch. */
    private final HeldStore store = new HeldStore();

    private final Batching<Call> b = new Batching<>(6, 64, 100, store);

    @AfterEach
    void noBurstLeftOpen() {
        Burst.end(); // a failed test must not leave this thread's burst open for the next one
    }

    /** A burst opened while a call is at the store, holding one decision ("a"), which it returns. */
    private Call heldWhileBusy() {
        busy(b);
        Burst.begin();
        Call held = new Call("a");
        b.submit(held);
        return held;
    }

    /** A call of {@code b} at the store (its {@code store.calls()} one more), sent outside any burst. */
    private static Call busy(Batching<Call> b) {
        Call c = new Call("busy");
        b.submit(c);
        return c;
    }

    @Test
    void whileTheStoreIsBusyABurstHoldsItsDecisionsAndSendsThemTogetherWhenItEnds() {
        busy(b);
        assertThat(Burst.begin()).isTrue();
        List<Call> calls = List.of(new Call("a"), new Call("b"), new Call("c"), new Call("d"));
        calls.forEach(b::submit);
        assertThat(store.calls())
                .as("nothing more goes while the burst is open")
                .isEqualTo(1);
        assertThat(b.queued()).isEqualTo(4);

        Burst.end();
        assertThat(store.calls())
                .as("one call for the whole burst, though five more could be in flight")
                .isEqualTo(2);
        assertThat(store.keysOf(1)).containsExactly("a", "b", "c", "d");
        store.answer(1);
        assertThat(calls).allSatisfy(c -> assertThat(c.answer()).isCompletedWithValue(1));

        b.submit(new Call("e"));
        assertThat(store.calls())
                .as("after the burst a decision goes at once again")
                .isEqualTo(3);
        assertThat(store.keysOf(2)).containsExactly("e");
    }

    @Test
    void whileTheStoreIsIdleTheFirstDecisionOfABurstGoesAtOnceAndTheRestWaitForItsEnd() {
        Burst.begin();
        b.submit(new Call("a"));
        assertThat(store.calls())
                .as("the store starts on it while the thread reads on")
                .isEqualTo(1);
        b.submit(new Call("b"));
        b.submit(new Call("c"));
        assertThat(store.calls()).isEqualTo(1);
        Burst.end();
        assertThat(store.calls()).isEqualTo(2);
        assertThat(store.keysOf(0)).containsExactly("a");
        assertThat(store.keysOf(1)).containsExactly("b", "c");
    }

    @Test
    void aBurstEndsForEveryPolicyItHeldDecisionsOf() {
        HeldStore redis = new HeldStore();
        HeldStore postgres = new HeldStore();
        Batching<Call> one = new Batching<>(6, 64, 100, redis);
        Batching<Call> other = new Batching<>(6, 64, 100, postgres);
        busy(one);
        busy(other);
        Burst.begin();
        one.submit(new Call("a"));
        other.submit(new Call("b"));
        one.submit(new Call("c"));
        Burst.end();
        assertThat(redis.calls()).isEqualTo(2);
        assertThat(redis.keysOf(1)).containsExactly("a", "c");
        assertThat(postgres.calls()).isEqualTo(2);
        assertThat(postgres.keysOf(1)).containsExactly("b");
    }

    @Test
    void onlyTheCallThatOpenedABurstEndsIt() {
        busy(b);
        assertThat(Burst.begin()).isTrue();
        assertThat(Burst.begin()).as("a nested begin opens nothing").isFalse();
        b.submit(new Call("a"));
        assertThat(store.calls()).isEqualTo(1);
        Burst.end();
        assertThat(store.calls()).isEqualTo(2);
        Burst.end(); // nothing open: nothing to send
        assertThat(store.calls()).isEqualTo(2);
    }

    @Test
    void aBurstLargerThanABatchGoesAsSeveralWithinMaxInFlightAndTheRestWithTheNextAnswer() {
        Batching<Call> small = new Batching<>(3, 3, 100, store); // three in flight, three a batch
        busy(small);
        Burst.begin();
        for (int i = 0; i < 8; i++) {
            small.submit(new Call("k" + i));
        }
        Burst.end();
        assertThat(store.calls()).as("three calls in flight at most").isEqualTo(3);
        assertThat(store.keysOf(1)).containsExactly("k0", "k1", "k2");
        assertThat(store.keysOf(2)).containsExactly("k3", "k4", "k5");
        store.answer(1);
        assertThat(store.calls()).isEqualTo(4);
        assertThat(store.keysOf(3)).containsExactly("k6", "k7");
    }

    @Test
    void aKeyTwiceInABurstSharesItsCallAndAKeyInFlightWaitsForItsCall() {
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

    /**
     * Answers the store's second call as soon as it is sent, from another thread; if it is not sent within 10 s (hang
     * guard) fails {@code held} instead.
     */
    private static void answerTheSecondCallWhenSent(HeldStore store, Call held) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        CompletableFuture<?> unused = CompletableFuture.runAsync(() -> {
            while (store.calls() < 2 && System.nanoTime() - giveUp < 0) {
                Thread.onSpinWait();
            }
            if (store.calls() < 2) {
                held.fail(new IllegalStateException("the held decision was never sent"));
            } else {
                store.answer(1);
            }
        });
    }

    @Test
    void aThreadThatWaitsInsideItsOwnBurstSendsWhatItHoldsFirst() throws Exception {
        Call held = heldWhileBusy();
        answerTheSecondCallWhenSent(store, held);
        TimeBudget budget = TimeBudget.of(Duration.ofSeconds(30));
        int got = budget.await(held.answer(), budget.deadline(), TimeBudget.Patience.NONE, f -> f.cancel(false));
        assertThat(got).isEqualTo(1);

        b.submit(new Call("b"));
        assertThat(store.calls()).as("the burst stays open after the wait").isEqualTo(2);
        Burst.end();
        assertThat(store.calls()).isEqualTo(3);
    }

    @Test
    void aSynchronousViewJoiningInsideItsOwnBurstSendsWhatItHoldsFirst() {
        Call held = heldWhileBusy();
        answerTheSecondCallWhenSent(store, held);
        assertThat(Futures.join(held.answer())).isEqualTo(1);
    }

    @Test
    void aClosedPolicySendsNothingAtTheEndOfABurst() {
        Call held = heldWhileBusy();
        b.close(new IllegalStateException("closed"));
        Burst.end();
        assertThat(store.calls()).isEqualTo(1);
        assertThat(held.answer()).isCompletedExceptionally();
    }
}
