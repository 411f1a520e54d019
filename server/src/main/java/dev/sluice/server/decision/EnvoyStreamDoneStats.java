package dev.sluice.server.decision;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Settlement;
import dev.sluice.algorithm.Exact;
import dev.sluice.server.decision.Plan.Item;
import dev.sluice.server.stats.EnvoyStats;
import org.jspecify.annotations.Nullable;

/**
 * One stream-done descriptor ({@link StreamDoneDecider}) in envoy's stats, as envoyproxy/ratelimit counts every
 * descriptor of every call, stream end or not: its {@code hits_addend} {@code h} all in {@code total_hits}, then
 * within, near or over the limit by the count before the hits and after them ({@code before + h}; {@link
 * EnvoyStats#counted}). envoy knows no reservation: a reservation's start and its end are two calls, each counting its
 * hits (the estimate, then the actual cost). The count before is read from what the store answered:
 * <ul>
 *   <li>a charge into a token bucket or GCRA: the permits taken past the capacity (the bucket's debt: the wait the
 *       store answered, in permits) on top of it, else the capacity less what remains, less the hits;</li>
 *   <li>a charge into envoy's counter: the counter less the hits; into a strict fixed window: the capacity less what
 *       remains and what the charge took;</li>
 *   <li>an estimate: the capacity less what remains, less the hits when allowed (a denial took nothing);</li>
 *   <li>a settle: the capacity less what the settle left, less the hits: the actual cost is counted as having brought
 *       the count where the settle left it (a settle into debt answers remaining 0, so its hits count up to the
 *       limit, not past it).</li>
 * </ul>
 * A descriptor with {@code h = 0} counts nothing, as in envoy; nothing is counted off the Envoy APIs (stats null).
 */
final class EnvoyStreamDoneStats {
    private final @Nullable EnvoyStats stats;
    private final Item it;

    EnvoyStreamDoneStats(@Nullable EnvoyStats stats, Item it) {
        this.stats = stats;
        this.it = it;
    }

    /** Counts the descriptor's hits under limit {@code c}, the count having been {@code before} (at least 0). */
    void counted(long c, long before) {
        if (stats != null) {
            long b = Math.max(0, before);
            long h = it.hits();
            stats.counted(it.metricRule(), it.matched().shadowMode(), c, h, b, plus(b, h));
        }
    }

    /** A charge of {@code taken} permits into a token bucket or GCRA, which the store answered with {@code d}. */
    void chargedTat(Decision d, long taken) {
        if (stats == null) {
            return;
        }
        Limit l = it.storeLimit();
        long c = l.capacity();
        long wait = d.retryAfterNanos();
        long after = wait == 0
                ? c - d.remaining()
                : plus(c, Exact.mulDivCeil(wait, l.timeScale(), l.intervalScaled())); // the debt, in permits
        counted(c, after - taken);
    }

    /** An estimate's decision under limit {@code c}. */
    void decided(long c, Decision d) {
        counted(c, c - d.remaining() - (d.allowed() ? it.hits() : 0));
    }

    /** A settle's answer under limit {@code c}. */
    void settled(long c, Settlement s) {
        counted(c, c - s.remaining() - it.hits());
    }

    /** {@code a + b} of non-negative longs, saturating. */
    private static long plus(long a, long b) {
        return a > Long.MAX_VALUE - b ? Long.MAX_VALUE : a + b;
    }
}
