package dev.sluice.postgres;

import dev.sluice.Limit;
import dev.sluice.algorithm.Inheritance;
import dev.sluice.algorithm.State;
import dev.sluice.algorithm.TatState;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * A named limit's row written under other numbers, read under the caller's, for the statements that decide in Java
 * (peek, multi-permit); the acquire functions do the same in SQL. The row's {@code numbers} are the {@link Limit#id()}
 * it was written under. A token bucket's ({@code "tb:capacity:timeScale:intervalScaled"}) backlog at now is drained at
 * the old time scale and carried over in permits ({@link Inheritance#tatBacklog(long, long, long)}), without building
 * the old limit (its interval may be under the 1 ms a {@link dev.sluice.Rate} accepts); a window's or log's
 * ({@code "fw:capacity:windowNanos"}) old limit is built again and read through {@link Inheritance#carryOver}.
 */
final class StoredNumbers {
    private StoredNumbers() {}

    /** The state {@code s}, written under {@code stored}, as {@code to} reads it at {@code nowNanos}. */
    static State read(State s, @Nullable String stored, long nowNanos, Limit to) {
        if (stored == null || stored.equals(Table.numbers(to))) {
            return s;
        }
        try {
            String[] n = stored.split(":", -1);
            if (!to.algorithm().isTat()) {
                long capacity = Long.parseLong(n[1]);
                Duration window = Duration.ofNanos(Long.parseLong(n[2]));
                Limit from = switch (to.algorithm()) {
                    case FIXED_WINDOW -> Limit.fixedWindow(capacity, window);
                    case SLIDING_WINDOW -> Limit.slidingWindow(capacity, window);
                    default -> Limit.slidingLog(capacity, window);
                };
                return Inheritance.carryOver(s, nowNanos, from.named(to.name()), to);
            }
            TatState tat = (TatState) s;
            if (tat.backlogScaled() == 0) {
                return s;
            }
            long scale = Long.parseLong(n[2]);
            long interval = Long.parseLong(n[3]);
            long t = Math.max(nowNanos, tat.atNanos());
            long elapsed = t - tat.atNanos();
            long b = elapsed == 0
                    ? tat.backlogScaled()
                    : Math.multiplyHigh(elapsed, scale) != 0 || elapsed * scale >= tat.backlogScaled()
                            ? 0
                            : tat.backlogScaled() - elapsed * scale;
            return new TatState(b == 0 ? 0 : Inheritance.tatBacklog(b, interval, to.intervalScaled()), t);
        } catch (RuntimeException e) {
            throw new IllegalStateException(
                    "a row's numbers '" + stored + "' are not those of a " + to.algorithm() + " Sluice wrote", e);
        }
    }
}
