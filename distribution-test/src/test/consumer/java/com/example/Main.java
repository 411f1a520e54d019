package com.example;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.Rate;
import dev.sluice.RateLimiter;
import dev.sluice.memory.InMemoryRateLimiter;

/** Three calls on a bucket of two that refills one an hour: allowed, allowed, denied. */
public final class Main {
    public static void main(String[] args) {
        RateLimiter limiter = InMemoryRateLimiter.create();
        Limit perUser = Limit.tokenBucket(2, Rate.perHour(1));
        for (int call = 1; call <= 3; call++) {
            Decision d = limiter.tryAcquire("user:42", perUser);
            System.out.println(
                    "call " + call + ": " + (d.allowed() ? "allowed" : "denied") + ", remaining " + d.remaining());
        }
    }
}
