package dev.sluice.store;

import dev.sluice.Ticker;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Whose clock decides a remote store's decisions. By default the store's own (PostgreSQL's
 * {@code clock_timestamp()}, Redis's {@code TIME}): every instance of an application agrees on it, which no
 * application clock can promise. A client {@link Ticker} decides instead only for tests and simulations (the
 * conformance suite drives every store with one). One type for both stores, so that "the store decides the time"
 * is a value with a name, not a {@code null} here and a {@code -1} there; each store turns a {@link Reading} into
 * its wire form (SQL {@code NULL}, an empty script argument) in one place.
 */
public final class StoreClock {
    private static final StoreClock STORE = new StoreClock(null);

    /** Null for the store's own clock (private: the API names the mode, {@link #store()}). */
    private final @Nullable Ticker ticker;

    private StoreClock(@Nullable Ticker ticker) {
        this.ticker = ticker;
    }

    /** The store's own clock: the default. */
    public static StoreClock store() {
        return STORE;
    }

    /** A client ticker decides (epoch nanoseconds): tests and simulations only. */
    public static StoreClock client(Ticker ticker) {
        return new StoreClock(Objects.requireNonNull(ticker, "ticker must not be null: use StoreClock.store()"));
    }

    /** True when the store reads its own clock. */
    public boolean isStore() {
        return ticker == null;
    }

    /** The time a call is decided at: the store's (read by the store) or the client ticker's now. */
    public Reading read() {
        return ticker == null ? Reading.STORE : new Reading(false, ticker.read());
    }

    @Override
    public String toString() {
        return ticker == null ? "the store's clock" : "client ticker " + ticker;
    }

    /**
     * One call's time: {@link #STORE} (the store reads its clock when it decides) or a client ticker's epoch
     * nanoseconds, read when the call was made.
     *
     * @param nanos the client's epoch nanoseconds; meaningless for {@link #STORE}
     */
    public record Reading(boolean store, long nanos) {
        /** The store reads its own clock. */
        public static final Reading STORE = new Reading(true, 0);

        /** The client's epoch nanoseconds. */
        public long clientNanos() {
            if (store) {
                throw new IllegalStateException("the store's clock is read by the store, not here");
            }
            return nanos;
        }
    }
}
