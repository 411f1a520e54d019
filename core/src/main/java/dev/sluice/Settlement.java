package dev.sluice;

import java.time.Duration;

/**
 * What {@link RateLimiter#settle(String, Limit, String, long)} did: a cost known only afterwards (LLM tokens, bytes,
 * rows scanned) was taken on an estimate by {@link RateLimiter#tryAcquireEstimate(String, Limit, long, String,
 * Duration)} and is now settled on the actual amount.
 *
 * <ul>
 *   <li>{@code settled}: true when the reservation was pending and is now settled (once: it is no longer pending);
 *       false when no such reservation was pending on this key and limit (never made, denied, already settled, or
 *       its {@code settleWithin} had passed, when its estimate stands). A false settle changed nothing.</li>
 *   <li>{@code estimate}: what the reservation took (0 when not settled).</li>
 *   <li>{@code adjusted}: the change the settle made to the key's count, in permits: {@code actual − estimate} when
 *       charging more (always charged in full: the work is done, so the key may go into debt that its next calls
 *       wait out), at most {@code estimate − actual} back when giving back (less when part of it cannot be given
 *       back: a full bucket, or an ended window; see {@link RateLimiter#settle}). Negative when given back; 0 when
 *       not settled.</li>
 *   <li>{@code remaining}: the permits available on the key right after the settle (0 in debt), as a {@link
 *       Decision}'s {@code remaining} would say; 0 when not settled.</li>
 * </ul>
 */
public record Settlement(boolean settled, long estimate, long adjusted, long remaining) {

    /** The answer when no such reservation was pending: nothing changed. */
    public static final Settlement NOT_PENDING = new Settlement(false, 0, 0, 0);

    /** A reservation left unsettled this long by default settles at its estimate. */
    public static final Duration DEFAULT_SETTLE_WITHIN = Duration.ofMinutes(15);

    /** The longest {@code settleWithin} a store accepts: it keeps each pending reservation until then. */
    public static final Duration MAX_SETTLE_WITHIN = Duration.ofHours(24);

    /** The longest reservation id (and in-flight holder id), in characters. */
    public static final int MAX_ID_LENGTH = 128;

    public Settlement {
        if (estimate < 0 || remaining < 0) {
            throw new IllegalArgumentException(
                    "settlement fields must not be negative: estimate " + estimate + ", remaining " + remaining);
        }
        if (!settled && (estimate != 0 || adjusted != 0 || remaining != 0)) {
            throw new IllegalArgumentException("an unsettled settlement has no numbers: use NOT_PENDING");
        }
    }

    /**
     * Checks a reservation id (or an in-flight holder id): 1 to {@value #MAX_ID_LENGTH} visible ASCII characters
     * ({@code !} to {@code ~}, no space), e.g. a UUID or an {@code x-request-id}.
     *
     * @param what what the id is, for the message ({@code "reservation"}, {@code "holder"})
     */
    public static void checkId(String what, String id) {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException(what + " id is empty: give each " + what
                    + " an id of its own, e.g. a UUID or the request's x-request-id");
        }
        if (id.length() > MAX_ID_LENGTH) {
            throw new IllegalArgumentException(what + " id '" + id.substring(0, 32) + "…' is " + id.length()
                    + " characters long: use at most " + MAX_ID_LENGTH + " (a UUID is 36)");
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c < '!' || c > '~') {
                throw new IllegalArgumentException(what + " id '" + id + "' has a character other than visible"
                        + " ASCII at index " + i + ": use letters, digits and punctuation without spaces");
            }
        }
    }

    /** Checks {@code settleWithin} (or an in-flight lease): above zero and at most {@link #MAX_SETTLE_WITHIN}. */
    public static void checkWithin(String what, Duration within) {
        if (within == null || within.isNegative() || within.isZero() || within.compareTo(MAX_SETTLE_WITHIN) > 0) {
            throw new IllegalArgumentException(what + " " + within + " is out of range: use more than 0 and at most "
                    + MAX_SETTLE_WITHIN + " (the store keeps the record until then)");
        }
    }

    /** Checks an actual cost: from 0 (nothing was used) to the limit's capacity. */
    public static void checkActual(Limit limit, long actual) {
        if (actual < 0 || actual > limit.capacity()) {
            throw new IllegalArgumentException("actual cost " + actual + " is out of range for " + limit.describe()
                    + ": settle from 0 to the capacity " + limit.capacity()
                    + " (a cost above the capacity could never have been admitted; settle at the capacity)");
        }
    }
}
