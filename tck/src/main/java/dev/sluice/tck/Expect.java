package dev.sluice.tck;

import dev.sluice.Decision;

/** Expected decisions, spelled out. */
final class Expect {
    private Expect() {}

    static Decision allowed(long limit, long remaining, long resetAfterNanos) {
        return new Decision(true, limit, remaining, 0, resetAfterNanos);
    }

    static Decision allowedAfterWait(long limit, long remaining, long waitNanos, long resetAfterNanos) {
        return new Decision(true, limit, remaining, waitNanos, resetAfterNanos);
    }

    static Decision denied(long limit, long remaining, long retryAfterNanos, long resetAfterNanos) {
        return new Decision(false, limit, remaining, retryAfterNanos, resetAfterNanos);
    }
}
