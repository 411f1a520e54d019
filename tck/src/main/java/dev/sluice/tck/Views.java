package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.Settlement;
import java.time.Duration;
import java.util.concurrent.CompletionException;

/**
 * The synchronous or the asynchronous view of a store's settle calls, so one scenario checks both: the asynchronous
 * view joins the future and rethrows what failed it as itself.
 */
enum Views {
    SYNC,
    ASYNC;

    Decision reserve(RateLimiter rl, String key, Limit limit, long estimate, String id, Duration within) {
        if (this == SYNC) {
            return rl.tryAcquireEstimate(key, limit, estimate, id, within);
        }
        return join(() ->
                rl.tryAcquireEstimateAsync(key, limit, estimate, id, within).join());
    }

    Settlement settle(RateLimiter rl, String key, Limit limit, String id, long actual) {
        if (this == SYNC) {
            return rl.settle(key, limit, id, actual);
        }
        return join(() -> rl.settleAsync(key, limit, id, actual).join());
    }

    private interface Call<T> {
        T call();
    }

    private static <T> T join(Call<T> call) {
        try {
            return call.call();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }
}
