package dev.sluice.server;

import dev.sluice.server.decision.DecisionService;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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
 */
final class StoreWatch implements AutoCloseable {
    /** How often the store is looked at: its health is at most this (plus a probe) behind the truth, idle or not. */
    static final Duration INTERVAL = Duration.ofSeconds(1);

    private static final Logger log = LoggerFactory.getLogger(StoreWatch.class);

    private final DecisionService service;
    private final Consumer<Boolean> publish;
    private final ScheduledExecutorService timer;

    /** @param publish told the store's health after each look (gRPC health); it may be told the same twice */
    StoreWatch(DecisionService service, Consumer<Boolean> publish) {
        this.service = service;
        this.publish = publish;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-store-watch");
            t.setDaemon(true);
            return t;
        });
        ScheduledFuture<?> unused = timer.scheduleWithFixedDelay(
                this::look, INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
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
        timer.shutdownNow();
    }
}
