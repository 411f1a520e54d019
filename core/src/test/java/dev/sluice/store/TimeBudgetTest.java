package dev.sluice.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Behaviour only: what a wait returns and who ends it; no assertion on elapsed time. */
class TimeBudgetTest {

    private static final TimeBudget BUDGET = TimeBudget.of(Duration.ofMillis(20));

    private static final class StoreTimeout extends RuntimeException {
        StoreTimeout() {
            super("the store did not answer");
        }
    }

    @Test
    void anAnswerBeforeTheDeadlineIsReturned() throws Exception {
        CompletableFuture<String> call = CompletableFuture.completedFuture("answer");
        AtomicBoolean expired = new AtomicBoolean();
        String got = BUDGET.await(call, BUDGET.deadline(), TimeBudget.Patience.NONE, f -> expired.set(true));
        assertThat(got).isEqualTo("answer");
        assertThat(expired).isFalse();
    }

    @Test
    void aCallThatNeverAnswersIsFailedByTheStoresExpiry() {
        CompletableFuture<String> call = new CompletableFuture<>();
        AtomicInteger expiries = new AtomicInteger();
        assertThatThrownBy(() -> BUDGET.await(call, BUDGET.deadline(), TimeBudget.Patience.NONE, f -> {
                    expiries.incrementAndGet();
                    f.completeExceptionally(new StoreTimeout());
                }))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(StoreTimeout.class);
        assertThat(expiries).hasValue(1);
    }

    @Test
    void anAnswerThatWinsTheRaceWithTheExpiryIsReturned() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        // the answer arrives just as the store's expiry runs: complete() wins, the expiry's failure loses
        String got = BUDGET.await(call, BUDGET.deadline(), TimeBudget.Patience.NONE, f -> {
            f.complete("late answer");
            f.completeExceptionally(new StoreTimeout());
        });
        assertThat(got).isEqualTo("late answer");
    }

    @Test
    void patienceKeepsACallWaitingUntilItAnswers() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        AtomicInteger asked = new AtomicInteger();
        // the store keeps the call waiting, one budget at a time, and answers on the third extension
        TimeBudget.Patience patience = (deadline, now) -> {
            if (asked.incrementAndGet() == 3) {
                call.complete("queued, then answered");
            }
            return now + BUDGET.nanos();
        };
        String got = BUDGET.await(call, BUDGET.deadline(), patience, f -> f.completeExceptionally(new StoreTimeout()));
        assertThat(got).isEqualTo("queued, then answered");
        assertThat(asked.get()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void patienceThatGivesUpLetsTheCallFail() {
        CompletableFuture<String> call = new CompletableFuture<>();
        AtomicInteger asked = new AtomicInteger();
        TimeBudget.Patience twice = (deadline, now) -> asked.incrementAndGet() <= 2 ? now + BUDGET.nanos() : deadline;
        assertThatThrownBy(() ->
                        BUDGET.await(call, BUDGET.deadline(), twice, f -> f.completeExceptionally(new StoreTimeout())))
                .hasCauseInstanceOf(StoreTimeout.class);
        assertThat(asked.get()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void anAsyncCallIsFailedAtItsDeadlineWithoutAWaitingThread() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        CountDownLatch expired = new CountDownLatch(1);
        assertThat(BUDGET.bound(call, BUDGET.deadline(), TimeBudget.Patience.NONE, f -> {
                    f.completeExceptionally(new StoreTimeout());
                    expired.countDown();
                }))
                .isSameAs(call);
        // hang guard only: 50 times the budget
        assertThat(expired.await(1, TimeUnit.SECONDS)).isTrue();
        assertThat(call).isCompletedExceptionally();
        assertThatThrownBy(call::get).hasCauseInstanceOf(StoreTimeout.class);
    }

    @Test
    void anAsyncCallThatAnswersIsNeverExpired() throws Exception {
        TimeBudget longBudget = TimeBudget.of(Duration.ofMillis(50));
        CompletableFuture<String> call = new CompletableFuture<>();
        AtomicBoolean expired = new AtomicBoolean();
        assertThat(longBudget.bound(call, longBudget.deadline(), TimeBudget.Patience.NONE, f -> expired.set(true)))
                .isSameAs(call);
        call.complete("answer");
        // a later call on the same timer thread runs after the first one's deadline would have
        CompletableFuture<String> later = new CompletableFuture<>();
        CountDownLatch laterExpired = new CountDownLatch(1);
        assertThat(longBudget.bound(
                        later,
                        longBudget.deadlineFrom(System.nanoTime() + longBudget.nanos()),
                        TimeBudget.Patience.NONE,
                        f -> laterExpired.countDown()))
                .isSameAs(later);
        assertThat(laterExpired.await(2, TimeUnit.SECONDS)).isTrue();
        assertThat(expired).isFalse();
        assertThat(call.get()).isEqualTo("answer");
    }

    @Test
    void asyncPatienceExtendsTheDeadline() throws Exception {
        CompletableFuture<String> call = new CompletableFuture<>();
        AtomicInteger asked = new AtomicInteger();
        CountDownLatch expired = new CountDownLatch(1);
        assertThat(BUDGET.bound(
                        call,
                        BUDGET.deadline(),
                        (deadline, now) -> asked.incrementAndGet() < 3 ? now + 1_000_000 : deadline,
                        f -> {
                            f.completeExceptionally(new StoreTimeout());
                            expired.countDown();
                        }))
                .isSameAs(call);
        assertThat(expired.await(2, TimeUnit.SECONDS)).isTrue();
        assertThat(asked.get()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void budgetsOutsideOneMillisecondToOneHourAreRejectedByName() {
        assertThatThrownBy(() -> TimeBudget.of("timeBudget", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeBudget PT0S");
        assertThatThrownBy(() -> TimeBudget.of("timeBudget", Duration.ofHours(2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 hour");
        assertThatThrownBy(() -> TimeBudget.of("timeBudget", null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("timeBudget");
        assertThat(TimeBudget.of(Duration.ofMillis(100))).isEqualTo(TimeBudget.of(Duration.ofMillis(100)));
    }
}
