package dev.sluice;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * What {@link RateLimiter#tryAcquireEach(List)} answers: the all-or-nothing decision of a multi-permit request and,
 * made atomically with it, one decision per permit saying that permit's own state after the call.
 *
 * <ul>
 *   <li>{@link #decision()} is exactly what {@link RateLimiter#tryAcquire(List)} answers for the same call:
 *       allowed iff every permit fits, the most restrictive of the permits' steps.</li>
 *   <li>When it is allowed, every permit was taken and {@code permits().get(i)} is the decision of permit
 *       {@code i}'s step, in request order (a permit naming the same key and limit as an earlier one sees that one
 *       taken), as {@link RateLimiter#tryAcquire(String, Limit, long)} would have answered it.</li>
 *   <li>When it is denied, nothing was taken, and {@code permits().get(i)} is what
 *       {@link RateLimiter#peek(String, Limit, long)} answers for permit {@code i}'s key, limit and cost on the
 *       state the call left untouched: denied exactly for the permits whose cost does not fit on its own (with the
 *       time until it would), allowed for the others (their remaining and reset as they are). Permits that each fit
 *       alone can still be denied together when they name the same key and limit.</li>
 * </ul>
 *
 * @param decision the all-or-nothing decision
 * @param permits one decision per permit, in request order
 */
public record PermitDecisions(Decision decision, List<Decision> permits) {
    public PermitDecisions {
        Objects.requireNonNull(decision, "decision must not be null");
        permits = List.copyOf(permits);
        if (permits.isEmpty()) {
            throw new IllegalArgumentException("a multi-permit request has at least one permit");
        }
    }

    /** Whether every permit was taken. */
    public boolean allowed() {
        return decision.allowed();
    }

    /** The answer to a request of one permit: its decision is the request's (a denial took nothing: its look). */
    public static PermitDecisions of(Decision single) {
        return new PermitDecisions(single, List.of(single));
    }

    /**
     * True when the store could tell only the overall decision, which then stands for every permit (the same
     * instance): what {@link RateLimiter}'s default answers for a store whose peek is unsupported or failed.
     */
    @SuppressWarnings("ReferenceEquality") // the very instance: an equal decision of a permit is its own
    public boolean combinedOnly() {
        if (permits.size() < 2) {
            return false;
        }
        for (Decision d : permits) {
            if (d != decision) {
                return false;
            }
        }
        return true;
    }

    /** Every permit answered with the overall decision: all a store that cannot look at a key can say. */
    static PermitDecisions uniform(Decision decision, int permits) {
        return new PermitDecisions(decision, Collections.nCopies(permits, decision));
    }

    /**
     * A permit's decision from a look taken after the overall decision (the defaults of {@link RateLimiter}): when
     * the call was allowed, the permit was taken (its numbers as the look found them, nothing to wait for); when
     * denied, the look itself.
     */
    static Decision after(Decision overall, Decision look) {
        return overall.allowed()
                ? new Decision(true, look.limit(), look.remaining(), 0, look.resetAfterNanos(), look.degradation())
                : look;
    }

    /** {@link RateLimiter#tryAcquireEachAsync}'s default: a look at each permit after the overall decision. */
    static CompletableFuture<PermitDecisions> peekedAfter(RateLimiter limiter, Decision overall, List<Permit> permits) {
        List<CompletableFuture<Decision>> looks = new ArrayList<>(permits.size());
        try {
            for (Permit p : permits) {
                looks.add(limiter.peekAsync(p.key(), p.limit(), p.cost()));
            }
        } catch (UnsupportedOperationException e) {
            return CompletableFuture.completedFuture(uniform(overall, permits.size()));
        }
        return CompletableFuture.allOf(looks.toArray(CompletableFuture[]::new)).handle((ignored, failure) -> {
            if (failure != null) {
                // the decision is made (its permits possibly taken): a failed look must not undo the answer
                return uniform(overall, permits.size());
            }
            List<Decision> each = new ArrayList<>(looks.size());
            for (CompletableFuture<Decision> look : looks) {
                each.add(after(overall, look.join()));
            }
            return new PermitDecisions(overall, each);
        });
    }
}
