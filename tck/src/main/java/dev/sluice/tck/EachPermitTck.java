package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.PermitDecisions;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link RateLimiter#tryAcquireEach}: the all-or-nothing decision with each permit's own decision, through both views,
 * against {@link ReferenceRateLimiter} (see {@link PermitDecisions} for what each element means). Keys of one request
 * share a Redis hash tag ({@link Tck#key(String)}).
 */
public interface EachPermitTck extends StoreUnderTest {

    @Test
    default void eachPermitOfAnAllowedRequestTellsItsOwnNumbers() {
        eachPermitOfAnAllowedRequestTellsItsOwnNumbers(false);
    }

    @Test
    default void eachPermitOfAnAllowedRequestTellsItsOwnNumbersThroughTheAsyncView() {
        eachPermitOfAnAllowedRequestTellsItsOwnNumbers(true);
    }

    private void eachPermitOfAnAllowedRequestTellsItsOwnNumbers(boolean async) {
        ManualTicker t = Tck.ticker();
        Limit wide = Limit.tokenBucket(100, Rate.perSecond(10));
        Limit narrow = Limit.tokenBucket(4, Rate.perSecond(1));
        String base = Tck.key("each-allowed");
        try (RateLimiter rl = newLimiter(t)) {
            PermitDecisions d =
                    each(rl, async, List.of(Permit.of(base + ":a", wide, 3), Permit.of(base + ":b", narrow, 3)));
            assertThat(d.decision()).isEqualTo(allowed(4, 1, Tck.s(3)));
            assertThat(d.permits()).containsExactly(allowed(100, 97, Tck.ms(300)), allowed(4, 1, Tck.s(3)));
        }
    }

    @Test
    default void aDeniedRequestTakesNothingAndNamesExactlyThePermitsThatDoNotFit() {
        aDeniedRequestTakesNothingAndNamesExactlyThePermitsThatDoNotFit(false);
    }

    @Test
    default void aDeniedRequestTakesNothingAndNamesExactlyThePermitsThatDoNotFitThroughTheAsyncView() {
        aDeniedRequestTakesNothingAndNamesExactlyThePermitsThatDoNotFit(true);
    }

    private void aDeniedRequestTakesNothingAndNamesExactlyThePermitsThatDoNotFit(boolean async) {
        ManualTicker t = Tck.ticker();
        Limit bucket = Limit.tokenBucket(5, Rate.perSecond(1));
        Limit window = Limit.fixedWindow(3, Duration.ofSeconds(1));
        String base = Tck.key("each-denied");
        String user = base + ":user";
        String ip = base + ":ip";
        String other = base + ":other";
        try (RateLimiter rl = newLimiter(t)) {
            assertThat(rl.tryAcquire(ip, window, 3).allowed()).isTrue();
            List<Permit> three =
                    List.of(Permit.of(user, bucket, 2), Permit.of(ip, window), Permit.of(other, bucket, 4));
            PermitDecisions d = each(rl, async, three);
            assertThat(d.allowed()).isFalse();
            // the window is full: only its permit is denied, with the time until its window ends
            assertThat(d.permits().get(1).allowed()).isFalse();
            assertThat(d.permits().get(1).retryAfterNanos()).isEqualTo(Tck.s(1));
            // the others fit: their state as it is (fresh), nothing taken
            assertThat(d.permits().get(0)).isEqualTo(allowed(5, 5, 0));
            assertThat(d.permits().get(2)).isEqualTo(allowed(5, 5, 0));
            assertThat(rl.peek(user, bucket, 5).allowed())
                    .as("nothing was taken")
                    .isTrue();
            assertThat(rl.peek(other, bucket, 5).allowed())
                    .as("nothing was taken")
                    .isTrue();
        }
    }

    @Test
    default void permitsOfOneKeyThatFitAloneCanBeDeniedTogether() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(5, Rate.perSecond(1));
        String k = Tck.key("each-same");
        try (RateLimiter rl = newLimiter(t)) {
            PermitDecisions d = rl.tryAcquireEach(List.of(Permit.of(k, l, 3), Permit.of(k, l, 3)));
            assertThat(d.allowed()).as("3 + 3 exceeds 5").isFalse();
            assertThat(d.permits()).containsExactly(allowed(5, 5, 0), allowed(5, 5, 0));
            // taken together: the last permit of the key tells its state after the call (an earlier one's numbers are
            // its own step's on Sluice's stores, which RateLimiter's default, looking after the call, cannot tell)
            PermitDecisions taken = rl.tryAcquireEach(List.of(Permit.of(k, l, 2), Permit.of(k, l, 3)));
            assertThat(taken.decision()).isEqualTo(allowed(5, 0, Tck.s(5)));
            assertThat(taken.permits().get(1)).isEqualTo(allowed(5, 0, Tck.s(5)));
        }
    }

    @Test
    default void randomRequestsTellEachPermitExactlyLikeTheReference() {
        randomRequests(false);
    }

    @Test
    default void randomRequestsThroughTheAsyncViewTellEachPermitExactlyLikeTheReference() {
        randomRequests(true);
    }

    /**
     * Requests of one to three permits on distinct (key, limit) pairs, and single calls in between that move the
     * state, compared decision by decision with the reference.
     */
    private void randomRequests(boolean async) {
        List<Limit> limits = List.of(
                Limit.tokenBucket(10, Rate.perSecond(3)),
                Limit.gcra(Rate.of(7, Duration.ofSeconds(2)), 4),
                Limit.fixedWindow(5, Duration.ofMillis(250)),
                Limit.slidingWindow(8, Duration.ofMillis(1300)),
                Limit.slidingLog(6, Duration.ofMillis(700)));
        long seed = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        ManualTicker t = Tck.ticker();
        String base = Tck.key("each-random");
        String[] keys = {base + ":a", base + ":b", base + ":c"};
        try (RateLimiter store = newLimiter(t);
                RateLimiter oracle = new ReferenceRateLimiter(t)) {
            for (int i = 0; i < differentialSteps() / 2; i++) {
                t.advanceNanos(random.nextLong(0, 200_000) * Tck.MICRO);
                Limit limit = limits.get(random.nextInt(limits.size()));
                String key = keys[random.nextInt(keys.length)];
                if (random.nextBoolean()) {
                    long cost = random.nextLong(1, limit.capacity() + 1);
                    assertThat(store.tryAcquire(key, limit, cost)).isEqualTo(oracle.tryAcquire(key, limit, cost));
                    continue;
                }
                List<Permit> permits = new ArrayList<>();
                int n = 1 + random.nextInt(3);
                for (int j = 0; j < n; j++) {
                    Limit l = limits.get(random.nextInt(limits.size()));
                    String k = keys[j];
                    permits.add(Permit.of(k, l, random.nextLong(1, l.capacity() + 1)));
                }
                PermitDecisions expected = oracle.tryAcquireEach(permits);
                assertThat(each(store, async, permits))
                        .as("seed %d, step %d: tryAcquireEach(%s)", seed, i, permits)
                        .isEqualTo(expected);
            }
        }
    }

    private static PermitDecisions each(RateLimiter rl, boolean async, List<Permit> permits) {
        return async ? rl.tryAcquireEachAsync(permits).join() : rl.tryAcquireEach(permits);
    }
}
