package dev.sluice.tck;

import static dev.sluice.tck.Expect.allowed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Permit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import org.assertj.core.api.Assertions;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/** Bad input is an IllegalArgumentException naming the value, thrown before any state changes. */
public interface BadInputTck extends StoreUnderTest {

    /** A public entry point called with one bad argument: {@code key}, {@code limit} or {@code cost}. */
    @FunctionalInterface
    interface EntryPoint {
        void call(RateLimiter limiter, BoundLimit bound, String key, Limit limit, long cost) throws Exception;
    }

    /** The bad inputs every entry point is given, with the exception and the start of the message each must get. */
    private static List<Object[]> badInputs(String goodKey, Limit goodLimit, boolean takesCost) {
        List<Object[]> out = new ArrayList<>(List.of(
                new Object[] {
                    null,
                    goodLimit,
                    1L,
                    NullPointerException.class,
                    "key must not be null: use a non-empty string such as \"user:42\""
                },
                new Object[] {"", goodLimit, 1L, IllegalArgumentException.class, "key \"\" is empty: use 1 to 4096"},
                new Object[] {
                    "k".repeat(4097),
                    goodLimit,
                    1L,
                    IllegalArgumentException.class,
                    "key of 4097 characters (starting \"kkk"
                },
                new Object[] {
                    goodKey,
                    null,
                    1L,
                    NullPointerException.class,
                    "limit must not be null: e.g. Limit.tokenBucket(10, Rate.perSecond(1))"
                }));
        if (takesCost) {
            out.add(new Object[] {goodKey, goodLimit, 0L, IllegalArgumentException.class, "cost 0 must be at least 1"});
            out.add(new Object[] {
                goodKey,
                goodLimit,
                goodLimit.capacity() + 1,
                IllegalArgumentException.class,
                "cost " + (goodLimit.capacity() + 1) + " exceeds capacity " + goodLimit.capacity()
            });
        }
        return out;
    }

    /**
     * Every public entry point of a store and of its {@link BoundLimit} checks its arguments before anything else:
     * a null, empty or over-long key, a null limit, a cost below 1 or above the capacity each get the library's own
     * exception and message (thrown by the call itself, also by the async ones), and the key's state is as it was.
     */
    @TestFactory
    default Stream<DynamicTest> everyEntryPointChecksItsArgumentsFirstAndChangesNothing() {
        Limit bucket = Limit.tokenBucket(3, Rate.perHour(1)).named("entry-points");
        Limit window = Limit.fixedWindow(3, Duration.ofHours(1)).named("entry-points-window");
        Duration second = Duration.ofSeconds(1);
        Object[][] entryPoints = {
            {"tryAcquire(key, limit, cost)", bucket, true, (EntryPoint) (rl, b, k, l, c) -> rl.tryAcquire(k, l, c)},
            {"tryAcquire(key, limit)", bucket, false, (EntryPoint) (rl, b, k, l, c) -> rl.tryAcquire(k, l)},
            {
                "tryAcquireAsync(key, limit, cost)",
                bucket,
                true,
                (EntryPoint) (rl, b, k, l, c) -> {
                    CompletableFuture<Decision> unused = rl.tryAcquireAsync(k, l, c); // bad input throws at once
                }
            },
            {
                "reserve(key, limit, cost, maxWait)",
                bucket,
                true,
                (EntryPoint) (rl, b, k, l, c) -> rl.reserve(k, l, c, second)
            },
            {"peek(key, limit, cost)", bucket, true, (EntryPoint) (rl, b, k, l, c) -> rl.peek(k, l, c)},
            {"peek(key, limit)", bucket, false, (EntryPoint) (rl, b, k, l, c) -> rl.peek(k, l)},
            {"reset(key, limit)", bucket, false, (EntryPoint) (rl, b, k, l, c) -> rl.reset(k, l)},
            {"bind(key, limit)", bucket, false, (EntryPoint) (rl, b, k, l, c) -> rl.bind(k, l)},
            {
                "BoundLimit.of(limiter, key, limit)",
                bucket,
                false,
                (EntryPoint) (rl, b, k, l, c) -> BoundLimit.of(rl, k, l)
            },
            {"bound.tryAcquire(cost)", bucket, true, (EntryPoint) (rl, b, k, l, c) -> b.tryAcquire(c)},
            {"bound.tryAcquirePermits(cost)", bucket, true, (EntryPoint) (rl, b, k, l, c) -> b.tryAcquirePermits(c)},
            {
                "bound.tryAcquireAsync(cost)",
                bucket,
                true,
                (EntryPoint) (rl, b, k, l, c) -> {
                    CompletableFuture<Decision> unused = b.tryAcquireAsync(c); // bad input throws at once
                }
            },
            {"bound.peek(cost)", bucket, true, (EntryPoint) (rl, b, k, l, c) -> b.peek(c)},
            {"bound.tryAcquire(cost, timeout)", bucket, true, (EntryPoint) (rl, b, k, l, c) -> b.tryAcquire(c, second)},
            // above the capacity, acquire(cost) books a token bucket's future: the window's cost is the bad one
            {"bound.acquire(cost)", window, true, (EntryPoint) (rl, b, k, l, c) -> b.acquire(c)},
        };
        return Arrays.stream(entryPoints)
                .map(e -> DynamicTest.dynamicTest((String) e[0], () -> {
                    Limit l = (Limit) e[1];
                    String k = Tck.key("entry-point");
                    try (RateLimiter rl = newLimiter(Tck.ticker())) {
                        BoundLimit b = rl.bind(k, l);
                        assertThat(rl.tryAcquire(k, l).allowed()).isTrue();
                        Decision before = rl.peek(k, l);
                        for (Object[] bad : badInputs(k, l, (Boolean) e[2])) {
                            String key = (String) bad[0];
                            Limit limit = (Limit) bad[1];
                            long cost = (Long) bad[2];
                            // the handle's own calls take their key and limit from the handle: only the cost can be bad
                            boolean onHandle = ((String) e[0]).startsWith("bound.");
                            if (onHandle && (!k.equals(key) || !l.equals(limit))) {
                                continue;
                            }
                            ThrowingCallable call = () -> ((EntryPoint) e[3]).call(rl, b, key, limit, cost);
                            assertThatThrownBy(call)
                                    .as(
                                            "%s with key %s, limit %s, cost %d",
                                            e[0], key == null ? null : Permit.abbreviate(key), limit, cost)
                                    .isInstanceOf((Class<?>) bad[3])
                                    .hasMessageStartingWith((String) bad[4]);
                        }
                        assertThat(rl.peek(k, l))
                                .as("%s: the key's state is as it was", e[0])
                                .isEqualTo(before);
                    }
                }));
    }

    @SuppressWarnings("NullAway") // passes null on purpose, to see it refused
    @Test
    default void theOtherArgumentsOfEveryEntryPointAreCheckedFirstToo() throws Exception {
        Limit l = Limit.tokenBucket(3, Rate.perHour(1));
        String k = Tck.key("other-arguments");
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            BoundLimit b = rl.bind(k, l);
            assertThat(rl.tryAcquire(k, l).allowed()).isTrue();
            Decision before = rl.peek(k, l);
            assertThatThrownBy(() -> rl.reserve(k, l, 1, null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageStartingWith("maxWait must not be null: use Duration.ZERO");
            assertThatThrownBy(() -> rl.reserve(k, l, 1, Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("maxWait PT-1S is negative");
            assertThatThrownBy(() -> rl.tryAcquire((List<Permit>) null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageStartingWith("permits must not be null: give a list of at least one Permit");
            assertThatThrownBy(() -> rl.tryAcquire(List.of()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("permits is empty: give at least one Permit");
            assertThatThrownBy(() -> rl.tryAcquire(Arrays.asList(Permit.of(k, l), null)))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageStartingWith("permits[1] is null: every element must be a Permit");
            assertThatThrownBy(() -> b.tryAcquire(1, null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageStartingWith("timeout must not be null: e.g. Duration.ofMillis(100)");
            assertThatThrownBy(() -> b.tryAcquire(1, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("timeout PT-0.001S is negative");
            assertThatThrownBy(() -> b.withSleeper(null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageStartingWith("sleeper must not be null: e.g. BoundLimit.Sleeper.PARK");
            assertThatThrownBy(() -> BoundLimit.of(null, k, l))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageStartingWith("limiter must not be null: e.g. InMemoryRateLimiter.create()");
            assertThat(rl.peek(k, l)).as("the key's state is as it was").isEqualTo(before);
        }
    }

    @Test
    default void badCostsAreRejectedAndChangeNothing() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(10, Rate.perSecond(1)).named("api-default");
        String k = Tck.key("bad-cost");
        try (RateLimiter rl = newLimiter(t)) {
            assertThatThrownBy(() -> rl.tryAcquire(k, l, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 0");
            assertThatThrownBy(() -> rl.tryAcquire(k, l, -5))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost -5");
            assertThatThrownBy(() -> rl.tryAcquire(k, l, 11))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 11 exceeds capacity 10 of limit 'api-default'")
                    .hasMessageContaining("can never be granted");
            assertThatThrownBy(() -> rl.reserve(k, l, 11, Duration.ofHours(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cost 11");
            // async: thrown at the call or carried by the future, either way an IllegalArgumentException
            Throwable async = Assertions.catchThrowable(
                    () -> rl.tryAcquireAsync(k, l, Long.MAX_VALUE).join());
            Throwable cause = async instanceof CompletionException ? async.getCause() : async;
            assertThat(cause).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exceeds capacity");
            assertThat(rl.tryAcquire(k, l)).as("state untouched").isEqualTo(allowed(10, 9, Tck.s(1)));
        }
    }

    @SuppressWarnings("NullAway") // passes null on purpose, to see it refused
    @Test
    default void badKeysAreRejected() {
        Limit l = Limit.fixedWindow(5, Duration.ofSeconds(1));
        try (RateLimiter rl = newLimiter(Tck.ticker())) {
            assertThatThrownBy(() -> rl.tryAcquire("", l))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("empty");
            String huge = "k".repeat(4097);
            assertThatThrownBy(() -> rl.tryAcquire(huge, l))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("4097");
            assertThatThrownBy(() -> rl.tryAcquire(null, l))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("key");
            assertThatThrownBy(() -> rl.tryAcquire("k", null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("limit");
        }
    }

    @Test
    default void awkwardKeysAreDistinctAndLimitedCorrectly() {
        ManualTicker t = Tck.ticker();
        Limit l = Limit.tokenBucket(2, Rate.perMinute(1));
        String base = Tck.key("awkward");
        String[] keys = {
            base + " with spaces",
            base + "{braces}",
            base + "'quote\"",
            base + "émoji 🚦",
            base + "\\back\\slash",
            base + ":" + "x".repeat(4096 - base.length() - 1),
            base + "%_*?[]"
        };
        try (RateLimiter rl = newLimiter(t)) {
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, l, 2).allowed())
                        .as("first use of %s", k)
                        .isTrue();
            }
            for (String k : keys) {
                assertThat(rl.tryAcquire(k, l).allowed())
                        .as("second use of %s", k)
                        .isFalse();
            }
        }
    }
}
