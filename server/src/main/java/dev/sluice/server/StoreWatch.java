package dev.sluice.server;

import dev.sluice.Scheduler;
import dev.sluice.server.decision.DecisionService;
import dev.sluice.store.Repeat;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's own look at its store, once every {@link #INTERVAL}: one {@link DecisionService#probe()} (a peek,
 * which writes nothing) through whatever wraps the store, then the store's health handed to gRPC health.
 *
 * <p>Why: a failure policy learns the store's health from the calls it makes, so without traffic that health would
 * stay as it was last seen: a store that died while no request came would look healthy, and one that came back after
 * an outage would look down for ever (its circuit closes only on a call that reaches it). With one probe a second,
 * {@code sluice_store_healthy}, the dashboard, {@code /healthcheck} and gRPC health follow the store within a few
 * seconds whatever the traffic: three failed probes open the circuit, the first one that reaches the store again
 * closes it. Only for a store behind a failure policy (the in-memory store cannot be down). A probe the policy
 * answers is counted in {@code sluice_degraded_decisions_total} like any other peek: one a second at most.
 *
 * <p>Time and threads are the server's {@link Scheduler}'s ({@link Repeat}): a look is scheduled an interval after the
 * last one ended and waits for its probe (bounded by the store's budget) on a daemon thread of the scheduler's
 * factory, {@code sluice-store-watch-<n>}; a test advancing a {@link dev.sluice.ManualScheduler} makes each look.
 */
final class StoreWatch implements AutoCloseable {
    /** How often the store is looked at: its health is at most this (plus a probe) behind the truth, idle or not. */
    static final Duration INTERVAL = Duration.ofSeconds(1);

    private static final Logger log = LoggerFactory.getLogger(StoreWatch.class);

    private final DecisionService service;
    private final Consumer<Boolean> publish;
    private final Repeat looks;

    /** @param publish told the store's health after each look (gRPC health); it may be told the same twice */
    StoreWatch(DecisionService service, Consumer<Boolean> publish, Scheduler scheduler) {
        this(service, publish, scheduler, null);
    }

    /** @param looksOn where looks run (tests); null: a daemon thread of {@code scheduler}'s factory */
    StoreWatch(DecisionService service, Consumer<Boolean> publish, Scheduler scheduler, @Nullable Executor looksOn) {
        this.service = service;
        this.publish = publish;
        this.looks = new Repeat(scheduler, "store-watch", looksOn, () -> {
            look();
            return INTERVAL;
        });
        looks.after(INTERVAL);
    }

    private void look() {
        try {
            // bounded by the store's budget and the service's deadline; a failed probe is health news, not an error
            service.probe().handle((d, e) -> null).join();
            publish.accept(service.storeReport().healthy());
        } catch (RuntimeException e) {
            log.error("event=store_watch_failed", e);
        }
    }

    @Override
    public void close() {
        looks.close(Duration.ZERO);
    }
}
