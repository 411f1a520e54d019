package dev.sluice.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.Rate;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * What a key's state becomes when its limit's numbers change ({@link Inheritance}): the worked examples of its class
 * comment, and the rule as a property: at the instant of the change, with {@code S} what was spent under the old
 * numbers, exactly {@code max(0, floor(C' − S))} more permits are admitted under the new ones — never more when a limit
 * is tightened (no burst), never fewer when it is loosened (nothing taken back beyond what was spent).
 */
class InheritanceTest {
    private static final long T0 = 1_767_225_600L * 1_000_000_000L; // aligned to days

    /** Admissions of cost 1 at {@code now} under {@code limit} until the first denial. */
    private static long drain(State state, long now, Limit limit) {
        long n = 0;
        State s = state;
        while (n <= limit.capacity()) {
            Step step = Algorithms.tryAcquire(s, now, limit, 1);
            if (!step.decision().allowed()) {
                break;
            }
            s = step.state();
            n++;
        }
        return n;
    }

    private static State spend(Limit limit, long now, long permits) {
        State s = Algorithms.fresh(limit);
        for (long i = 0; i < permits; i++) {
            Step step = Algorithms.tryAcquire(s, now, limit, 1);
            assertThat(step.decision().allowed()).isTrue();
            s = step.state();
        }
        return s;
    }

    @Example
    void aTokenBucketTightenedWaitsUntilWhatWasSpentFitsTheNewBucket() {
        Limit l1 = Limit.tokenBucket(10, Rate.perSecond(1)).named("api");
        Limit l2 = Limit.tokenBucket(5, Rate.of(1, Duration.ofSeconds(2))).named("api");
        State s = Inheritance.carryOver(spend(l1, T0, 10), T0, l1, l2);
        // 10 spent at 2 s each: 20 s of backlog against a bucket of 10 s
        assertThat(drain(s, T0, l2)).isZero();
        assertThat(drain(s, T0 + 11_999_999_999L, l2)).isZero();
        assertThat(drain(s, T0 + 12_000_000_000L, l2)).isEqualTo(1);
        assertThat(drain(s, T0 + 20_000_000_000L, l2)).isEqualTo(5);
        // and back: nothing was forgotten on the way
        assertThat(Inheritance.carryOver(s, T0, l2, l1)).isEqualTo(new TatState(10 * l1.intervalScaled(), T0));
    }

    @Example
    void aTokenBucketLoosenedKeepsWhatWasSpentAndReadsItAtTheNewRate() {
        Limit l1 = Limit.tokenBucket(10, Rate.perSecond(1)).named("api");
        Limit l3 = Limit.tokenBucket(20, Rate.perSecond(2)).named("api");
        State s = Inheritance.carryOver(spend(l1, T0, 10), T0, l1, l3);
        assertThat(s).isEqualTo(new TatState(10 * l3.intervalScaled(), T0));
        assertThat(drain(s, T0, l3)).isEqualTo(10);
        assertThat(drain(s, T0 + 5_000_000_000L, l3))
                .as("the 10 spent are back in 5 s at 2/s")
                .isEqualTo(20);
    }

    @Example
    void permitsReservedAheadStayOwedUnderTheNewNumbers() {
        Limit l1 = Limit.gcra(Rate.perSecond(1), 3).named("g");
        Limit l2 = Limit.gcra(Rate.perSecond(2), 1).named("g");
        // 3 taken, then 2 reserved: 5 s of backlog, 2 s of it beyond the bucket
        State s = spend(l1, T0, 3);
        s = Algorithms.reserve(s, T0, l1, 2, Long.MAX_VALUE).state();
        TatState read = Inheritance.tat((TatState) s, T0, l1, l2);
        // all 5 spent, at 500 ms each
        assertThat(read.backlogScaled()).isEqualTo(5 * l2.intervalScaled());
    }

    @Example
    void aFixedWindowKeepsItsCountIntoTheNewWindow() {
        Limit l1 = Limit.fixedWindow(100, Duration.ofMinutes(1)).named("fw");
        Limit l2 = Limit.fixedWindow(50, Duration.ofMinutes(1)).named("fw");
        Limit l3 = Limit.fixedWindow(120, Duration.ofMinutes(1)).named("fw");
        long now = T0 + 10_000_000_000L;
        State s = spend(l1, now, 80);
        assertThat(drain(Inheritance.carryOver(s, now, l1, l2), now, l2)).isZero();
        assertThat(drain(Inheritance.carryOver(s, now, l1, l3), now, l3)).isEqualTo(40);
        assertThat(Inheritance.carryOver(s, now + 60_000_000_000L, l1, l3))
                .as("a count of an ended window is nothing")
                .isEqualTo(WindowState.FRESH);
    }

    @Example
    void aSlidingWindowOfAnotherLengthStartsFromTheEstimateRoundedUp() {
        Limit l1 = Limit.slidingWindow(10, Duration.ofSeconds(1)).named("sw");
        Limit l2 = Limit.slidingWindow(10, Duration.ofSeconds(2)).named("sw");
        State s = spend(l1, T0 + 900_000_000L, 10);
        long now = T0 + 1_250_000_000L; // the previous window's 10 weigh 7.5
        State read = Inheritance.carryOver(s, now, l1, l2);
        assertThat(read).isEqualTo(new SlidingWindowState(Math.floorDiv(now, 2_000_000_000L), 0, 8));
        assertThat(drain(read, now, l2)).isEqualTo(2);
    }

    @Example
    void aSlidingLogKeepsItsEntriesWithTheirTimes() {
        Limit l1 = Limit.slidingLog(5, Duration.ofSeconds(10)).named("sl");
        Limit l2 = Limit.slidingLog(3, Duration.ofSeconds(10)).named("sl");
        State s = spend(l1, T0, 4);
        long now = T0 + 3_000_000_000L;
        State read = Inheritance.carryOver(s, now, l1, l2);
        assertThat(Algorithms.tryAcquire(read, now, l2, 1).decision().retryAfterNanos())
                .isEqualTo(7_000_000_000L);
        // a 2 s window would have dropped them: they count at the change and leave 1 µs after it
        Limit shorter = Limit.slidingLog(5, Duration.ofSeconds(2)).named("sl");
        State kept = Inheritance.carryOver(s, now, l1, shorter);
        assertThat(drain(kept, now, shorter)).isEqualTo(1);
        assertThat(drain(kept, now + 1_000, shorter)).isEqualTo(5);
    }

    @Example
    void anotherAlgorithmStartsFresh() {
        Limit l1 = Limit.tokenBucket(10, Rate.perSecond(1)).named("x");
        Limit l2 = Limit.gcra(Rate.perSecond(1), 10).named("x");
        assertThat(l1.sameIdentity(l2)).isFalse();
        assertThat(Inheritance.carryOver(spend(l1, T0, 10), T0, l1, l2)).isEqualTo(TatState.FRESH);
    }

    // ------------------------------------------------------------------------------------------------
    // the rule as a property

    record Change(Limit from, Limit to, List<Long> spending, long gapNanos) {}

    @Property(tries = 2000)
    void exactlyWhatWasNotSpentIsAdmittedAtTheChange(@ForAll("changes") Change c) {
        long now = T0;
        State s = Algorithms.fresh(c.from());
        for (long step : c.spending()) {
            now += step;
            Step taken = Algorithms.tryAcquire(s, now, c.from(), 1);
            s = taken.state();
        }
        now += c.gapNanos();
        long[] spent = spent(s, now, c.from()); // a fraction: numerator, denominator
        long expected = Math.max(0, c.to().capacity() - ceilDiv(spent[0], spent[1]));
        State read = Inheritance.carryOver(s, now, c.from(), c.to());
        assertThat(drain(read, now, c.to()))
                .as("spent %d/%d under %s, read under %s", spent[0], spent[1], c.from(), c.to())
                .isEqualTo(expected);
    }

    /** What was spent at {@code now} under {@code limit}, in permits, as numerator and denominator. */
    private static long[] spent(State state, long now, Limit limit) {
        if (state instanceof TatState t) {
            return new long[] {Gcra.backlogAt(t.backlogScaled(), t.atNanos(), now, limit), limit.intervalScaled()};
        }
        if (state instanceof WindowState w) {
            return new long[] {w.window() == FixedWindow.windowOf(now, limit) ? w.count() : 0, 1};
        }
        if (state instanceof SlidingWindowState sw) {
            long width = limit.periodNanos();
            long k = Math.floorDiv(now, width);
            long prev = SlidingWindow.previousAt(sw, k);
            long curr = SlidingWindow.currentAt(sw, k);
            return new long[] {prev * (width - (now - k * width)) + curr * width, width};
        }
        LogState log = (LogState) state;
        long sum = 0;
        for (int i = 0; i < log.size(); i++) {
            sum += log.time(i) > now - limit.periodNanos() ? log.cost(i) : 0;
        }
        return new long[] {sum, 1};
    }

    private static long ceilDiv(long a, long b) {
        return Math.floorDiv(a + b - 1, b);
    }

    @Provide
    Arbitrary<Change> changes() {
        Arbitrary<Algorithm> algorithms = Arbitraries.of(Algorithm.class);
        Arbitrary<Long> capacities = Arbitraries.longs().between(1, 40);
        Arbitrary<Long> periodsMs = Arbitraries.longs().between(1, 5_000);
        // instants: often the same one or whole milliseconds apart (what was spent is then often a whole number of
        // permits: the boundaries where rounding shows), else any nanosecond
        Arbitrary<Long> instants = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(0L)),
                Tuple.of(3, Arbitraries.longs().between(1, 400).map(ms -> ms * 1_000_000L)),
                Tuple.of(2, Arbitraries.longs().between(1, 400_000_000L)));
        Arbitrary<List<Long>> spending = instants.list().ofMaxSize(60);
        Arbitrary<Long> gaps = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(0L)),
                Tuple.of(3, Arbitraries.longs().between(1, 3_000).map(ms -> ms * 1_000_000L)),
                Tuple.of(2, Arbitraries.longs().between(1, 3_000_000_000L)));
        return Combinators.combine(algorithms, capacities, periodsMs, capacities, periodsMs, capacities, spending, gaps)
                .as((a, c1, p1, c2, p2, permits, steps, gap) -> new Change(
                        limit(a, c1, p1, permits).named("p"),
                        limit(a, c2, p2, permits + 1).named("p"),
                        steps,
                        gap));
    }

    private static Limit limit(Algorithm a, long capacity, long periodMs, long permits) {
        Duration period = Duration.ofMillis(periodMs);
        return switch (a) {
            case TOKEN_BUCKET -> Limit.tokenBucket(capacity, Rate.of(permits, period));
            case GCRA -> Limit.gcra(Rate.of(permits, period), capacity);
            case FIXED_WINDOW -> Limit.fixedWindow(capacity, period);
            case SLIDING_WINDOW -> Limit.slidingWindow(capacity, period);
            case SLIDING_LOG -> Limit.slidingLog(capacity, period);
        };
    }
}
