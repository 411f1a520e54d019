package dev.sluice.bench;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.BoundLimit;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.ManualTicker;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.doctest.Docs;
import dev.sluice.doctest.Markdown;
import dev.sluice.memory.InMemoryRateLimiter;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README's "Coming from another limiter" tables, run as written: every call in either column of a row is a call
 * of this class ({@link #everyCallOfTheTablesIsRunHere} checks the README against this file's text, white space
 * aside), with the
 * variables the tables name ({@code limiter}, {@code key}, {@code bound}, {@code n}, {@code p}, {@code t}). Sluice
 * decides on a frozen clock and its blocking calls move that clock instead of sleeping, so its answers are exact.
 * Where both libraries give verdicts they are compared on the same numbers, at rates slow enough (a permit an hour)
 * that no refill falls between two calls however busy the machine; where they differ (Guava's {@code acquire(n)}),
 * each side's documented behaviour is checked.
 */
class ComingFromTest {

    private final ManualTicker clock = ManualTicker.atEpochNanos(1_767_225_600L * 1_000_000_000L);
    private final RateLimiter limiter =
            InMemoryRateLimiter.builder().ticker(clock).build();
    /** How long each blocking call of a handle from {@link #onTheClock} was told to wait. */
    private final List<Long> waited = new ArrayList<>();

    /** {@code b} whose blocking calls advance the frozen clock by their wait instead of sleeping. */
    private BoundLimit onTheClock(BoundLimit b) {
        return b.withSleeper(nanos -> {
            waited.add(nanos);
            clock.advanceNanos(nanos);
        });
    }

    @Test
    void guavaRowsAsWritten() throws InterruptedException {
        String key = "guava";
        com.google.common.util.concurrent.RateLimiter guava = com.google.common.util.concurrent.RateLimiter.create(5.0);
        BoundLimit bound = onTheClock(limiter.bind(key, Limit.gcra(Rate.perSecond(5), 1)));
        int n = 1; // Guava counts permits in ints, Sluice in longs: the same variable serves both
        assertThat(guava.tryAcquire()).isEqualTo(bound.tryAcquirePermit()).isTrue(); // the first is free on both
        assertThat(bound.tryAcquirePermits(n))
                .as("the next permit is 200 ms away")
                .isFalse();
        assertThat(bound.tryAcquire(n).retryAfter()).isEqualTo(Duration.ofMillis(200));
        assertThat(bound.tryAcquire(n, Duration.ofMillis(10))).isFalse();
        n = 2;
        int twice = n;
        assertThatThrownBy(() -> bound.tryAcquirePermits(twice))
                .as("n above the burst: never granted at once")
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cost 2 exceeds capacity 1");

        // acquire(): the next permit, 200 ms on; acquire(n) of any n: n = 5 on a burst of 1 waits for the last of five
        bound.acquire();
        n = 5;
        bound.acquire(n);
        assertThat(waited)
                .containsExactly(
                        Duration.ofMillis(200).toNanos(),
                        Duration.ofMillis(1000).toNanos());
        assertThat(bound.tryAcquire(1).retryAfter())
                .as("this call waited for its own permits: the next is 200 ms on")
                .isEqualTo(Duration.ofMillis(200));
        // Guava lets acquire(n) through once what was owed before is paid (one permit: at most 0.2 s), whatever n,
        // and makes the next caller wait for it: ten seconds after acquire(50)
        n = 50;
        assertThat(guava.acquire(n)).isLessThanOrEqualTo(0.2);
        assertThat(guava.tryAcquire(n)).isFalse();
        assertThat(guava.tryAcquire(n, 10, MILLISECONDS)).isFalse();
        assertThat(com.google.common.util.concurrent.RateLimiter.create(5.0).acquire())
                .as("nothing owed")
                .isZero();

        BoundLimit stored = limiter.bind(key, Limit.tokenBucket(5, Rate.perSecond(5)));
        assertThat(stored.tryAcquirePermits(5))
                .as("one second stored while idle: 5 at once")
                .isTrue();
        assertThat(com.google.common.util.concurrent.RateLimiter.create(5.0, 3, SECONDS)
                        .getRate())
                .isEqualTo(5.0);
        double r = 1000;
        guava.setRate(r);
        Limit newLimit = Limit.gcra(Rate.perSecond(1000), 1);
        assertThat(limiter.bind(key, newLimit).tryAcquirePermit())
                .as("a new limit: its own state")
                .isTrue();
    }

    @Test
    void guavaVerdictsOnTheSameNumbers() {
        com.google.common.util.concurrent.RateLimiter guava =
                com.google.common.util.concurrent.RateLimiter.create(1.0 / 3600);
        BoundLimit bound = limiter.bind("guava-slow", Limit.gcra(Rate.perHour(1), 1));
        assertThat(guava.tryAcquire()).isEqualTo(bound.tryAcquire().allowed()).isTrue();
        assertThat(guava.tryAcquire()).isEqualTo(bound.tryAcquirePermit()).isFalse();
        assertThat(guava.tryAcquire(1)).isEqualTo(bound.tryAcquirePermits(1)).isFalse();
        assertThat(guava.tryAcquire(1, 10, MILLISECONDS))
                .isEqualTo(bound.tryAcquire(1).allowed())
                .isFalse();
    }

    @Test
    void bucket4jRowsAsWritten() throws InterruptedException {
        String key = "bucket4j";
        Bucket bucket = Bucket.builder()
                .addLimit(l -> l.capacity(10).refillGreedy(1, Duration.ofHours(1)))
                .build();
        BoundLimit bound = onTheClock(limiter.bind(key, Limit.tokenBucket(10, Rate.perHour(1))));
        long n = 4;
        assertThat(bucket.tryConsume(n)).isEqualTo(bound.tryAcquirePermits(n)).isTrue();
        n = 1;
        ConsumptionProbe probe = bucket.tryConsumeAndReturnRemaining(n);
        Decision d = bound.tryAcquire(n);
        assertThat(probe.isConsumed()).isEqualTo(d.allowed()).isTrue();
        assertThat(probe.getRemainingTokens()).isEqualTo(d.remaining()).isEqualTo(5);
        assertThat(probe.getNanosToWaitForRefill())
                .isEqualTo(d.retryAfterNanos())
                .isZero();
        assertThat(bucket.getAvailableTokens())
                .isEqualTo(bound.peek().remaining())
                .isEqualTo(5);
        n = 6;
        assertThat(bucket.tryConsume(n))
                .isEqualTo(bound.tryAcquire(n).allowed())
                .isFalse();
        assertThat(bucket.asBlocking().tryConsume(n, Duration.ofMillis(10)))
                .isEqualTo(bound.tryAcquire(n, Duration.ofMillis(10)))
                .isFalse();
        n = 2;
        bucket.asBlocking().consume(n); // available: no wait
        bound.acquire(n);
        assertThat(waited).containsExactly(0L);
        assertThat(bucket.getAvailableTokens())
                .isEqualTo(bound.peek().remaining())
                .isEqualTo(3);
        bucket.reset();
        bound.reset();
        assertThat(bucket.getAvailableTokens())
                .isEqualTo(bound.peek().remaining())
                .isEqualTo(10);
    }

    @Test
    void resilience4jRowsAsWritten() throws InterruptedException {
        // both count permits per period; Resilience4j's periods start when it is created, Sluice's windows at the
        // epoch, so a first period may be shorter: periods of 1,000 days keep both far from their end here
        Duration p = Duration.ofDays(1000);
        io.github.resilience4j.ratelimiter.RateLimiter r4j = io.github.resilience4j.ratelimiter.RateLimiter.of(
                "x",
                RateLimiterConfig.custom()
                        .limitForPeriod(2)
                        .limitRefreshPeriod(p)
                        .timeoutDuration(Duration.ZERO)
                        .build());
        BoundLimit bound = limiter.bind("x", Limit.fixedWindow(2, p));
        int n = 1;
        assertThat(r4j.acquirePermission()).isEqualTo(bound.tryAcquirePermit()).isTrue();
        assertThat(r4j.acquirePermission(n))
                .isEqualTo(bound.tryAcquirePermits(n))
                .isTrue();
        assertThat(r4j.acquirePermission()).isEqualTo(bound.tryAcquirePermit()).isFalse();
        Duration t = Duration.ofMillis(10);
        io.github.resilience4j.ratelimiter.RateLimiter waiting = io.github.resilience4j.ratelimiter.RateLimiter.of(
                "x",
                RateLimiterConfig.custom()
                        .limitForPeriod(2)
                        .limitRefreshPeriod(p)
                        .timeoutDuration(t)
                        .build());
        waiting.acquirePermission(2);
        assertThat(waiting.acquirePermission())
                .isEqualTo(bound.tryAcquire(1, t))
                .isFalse();
    }

    /**
     * Every call in the README's three tables (a code span with a parenthesis, in either column) is in this class's
     * source as written: the tables show what is run here.
     */
    @Test
    void everyCallOfTheTablesIsRunHere() throws IOException {
        String source = Files.readString(
                        Path.of("src/test/java/dev/sluice/bench/ComingFromTest.java"), StandardCharsets.UTF_8)
                .replaceAll("\\s+", "");
        List<String> calls = new ArrayList<>();
        boolean inTables = false;
        for (String line : Markdown.lines(Docs.root().resolve("README.md")).toList()) {
            if (line.startsWith("### ")) {
                inTables = line.equals("### Coming from another limiter");
            } else if (inTables && line.startsWith("| ") && !line.startsWith("|---")) {
                String[] parts = line.split("`", -1); // code spans are the odd parts
                for (int i = 1; i < parts.length; i += 2) {
                    if (parts[i].contains("(")) {
                        calls.add(parts[i]);
                    }
                }
            }
        }
        assertThat(calls).as("calls in the README's tables").hasSizeGreaterThan(30);
        assertThat(calls.stream()
                        .filter(c -> !source.contains(c.replaceAll("\\s+", "")))
                        .toList())
                .as("calls of the README's tables that ComingFromTest does not run as written")
                .isEmpty();
    }
}
