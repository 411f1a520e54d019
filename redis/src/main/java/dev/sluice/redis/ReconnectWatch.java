package dev.sluice.redis;

import dev.sluice.store.ReconnectBackoff;
import io.lettuce.core.event.Event;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.event.connection.ReconnectFailedEvent;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * What Lettuce's reconnections met, and how long Lettuce waits before the next one.
 *
 * <p>When Redis goes away, Lettuce reconnects in the background. After an outage the attempts are quick (1 ms
 * doubling to {@link RedisConnection#MAX_RECONNECT_DELAY}): a restarted Redis is used again within that, and a
 * refused connection costs Redis nothing. But when Redis comes back refusing this client (its password was rotated,
 * the ACL user disabled), every attempt is a login it refuses: those back off as {@link ReconnectBackoff} says (1 s
 * doubling to 30 s), and the limiter's decisions say {@code MISCONFIGURED} with what was refused
 * ({@link #refusal()}) instead of "not connected". Fed by the client resources' event bus; only for the resources
 * the limiter creates (with the caller's own, Lettuce's reconnect delay is the caller's).
 */
final class ReconnectWatch extends Delay {
    private final Delay outage =
            Delay.exponential(Duration.ofMillis(1), RedisConnection.MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS);
    /** What the last reconnection was refused for, with the fix; null when it was not refused. */
    private volatile @Nullable String refusal;

    private volatile int refusals;
    /** Null until {@link #watch} (never, with the caller's own client resources). */
    private @Nullable Disposable subscription;

    /** Starts listening to {@code resources}' reconnection events. */
    void watch(ClientResources resources) {
        subscription = resources.eventBus().get().subscribe(this::seen);
    }

    void stop() {
        Disposable s = subscription;
        if (s != null) {
            s.dispose();
        }
    }

    void seen(Event e) {
        if (e instanceof ReconnectFailedEvent failed) {
            String why = RedisRefusals.of(failed.getCause());
            refusal = why;
            refusals = why == null ? 0 : refusals + 1; // one event thread per connection: no lost update matters
        } else if (e instanceof ConnectionActivatedEvent) {
            refusal = null;
            refusals = 0;
        }
    }

    /** What Redis refused when this client last tried to reconnect, or null. */
    @Nullable
    String refusal() {
        return refusal;
    }

    @Override
    public Duration createDelay(long attempt) {
        int n = refusals;
        return n > 0 ? Duration.ofNanos(ReconnectBackoff.nanosAfter(n)) : outage.createDelay(attempt);
    }
}
